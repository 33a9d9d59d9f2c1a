import { writeFileSync } from 'node:fs';

/** `--quick`: the short run of CI, which checks that every benchmark still runs, not its figures. */
export const quick = process.argv.includes('--quick');

/** Picks the figure of a full run or of a quick one. */
export const sized = <T>(full: T, short: T): T => (quick ? short : full);

/**
 * Hands the structured figures of this benchmark to `bench/run.ts` (which writes them into
 * `bench/report.json`); does nothing when the benchmark runs on its own.
 */
export function saveFigures(figures: unknown): void {
  const path = process.env.BENCH_FIGURES;
  if (path) writeFileSync(path, JSON.stringify(figures, null, 2));
}

/** Heap in use after a full collection, when the process runs with `--expose-gc` (as `npm run bench` does). */
export function settledHeap(): number {
  const collect = (globalThis as { gc?: () => void }).gc;
  collect?.();
  collect?.();
  return process.memoryUsage().heapUsed;
}

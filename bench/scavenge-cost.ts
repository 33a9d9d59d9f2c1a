/**
 * What one young-generation collection (a scavenge) costs as the old generation grows, whatever the
 * program allocates: the same short-lived garbage is allocated beside old generations of several
 * sizes, none of which it touches. This is why expiries slow down with a million requests pending
 * (docs/performance.md#many-pending-requests-the-young-generation): each scavenge costs more, and a
 * larger young generation means fewer of them. The baseline is the same garbage beside an empty
 * old generation.
 */
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { saveFigures, settledHeap, sized } from './options.js';

/** Long-lived records kept, per run: about 700 bytes each, like a stored record and its key. */
const sizes = sized([0, 300_000, 1_500_000, 3_500_000], [0, 1_000, 10_000, 20_000]);
/** Short-lived objects allocated per run, each kept only until a small ring overwrites it. */
const garbage = sized(40_000_000, 1_000_000);

/** Figures of one old-generation size. */
interface ScavengeCost {
  records: number;
  oldGenerationMiB: number;
  scavenges: number;
  msPerScavenge: number;
  /** Wall time of the allocating loop. */
  loopMs: number;
}

function storedRecords(count: number): Map<string, { text: string; values: number[] }> {
  const records = new Map<string, { text: string; values: number[] }>();
  for (let n = 0; n < count; n += 1) {
    records.set(`record:${n}`, { text: `${n} `.padEnd(300, 'x'), values: [n, n + 1, n + 2, n + 3] });
  }
  return records;
}

async function measure(records: number): Promise<ScavengeCost> {
  const kept = storedRecords(records);
  const oldGenerationMiB = settledHeap() / 2 ** 20;
  let scavenges = 0;
  let scavengeMs = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (
        (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind !==
        constants.NODE_PERFORMANCE_GC_MINOR
      )
        continue;
      scavenges += 1;
      scavengeMs += entry.duration;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  // A ring, so that the objects escape (the optimizer would not allocate them otherwise) and die young.
  const ring: unknown[] = new Array(1024);
  const started = performance.now();
  for (let n = 0; n < garbage; n += 1) ring[n % ring.length] = { n, pair: [n, n + 1] };
  const loopMs = performance.now() - started;
  // Entries of the observer arrive in a later task.
  await new Promise((resolve) => setTimeout(resolve, 50));
  observer.disconnect();
  if (kept.size !== records) throw new Error('the old generation was not kept');
  return {
    records,
    oldGenerationMiB,
    scavenges,
    msPerScavenge: scavenges === 0 ? 0 : scavengeMs / scavenges,
    loopMs,
  };
}

const costs: ScavengeCost[] = [];
for (const records of sizes) costs.push(await measure(records));
const baseline = costs[0];
console.log(
  `${garbage.toLocaleString('en')} short-lived objects allocated beside an old generation of each size\n\n` +
    `${'old generation'.padStart(15)} ${'scavenges'.padStart(10)} ${'ms each'.padStart(8)} ${'loop ms'.padStart(8)}`,
);
for (const cost of costs) {
  const ratio =
    baseline && baseline.msPerScavenge > 0 && cost !== baseline
      ? `  ${(cost.msPerScavenge / baseline.msPerScavenge).toFixed(1)}x baseline per scavenge`
      : '  baseline';
  console.log(
    `${`${cost.oldGenerationMiB.toFixed(0)} MiB`.padStart(15)} ${String(cost.scavenges).padStart(10)} ${cost.msPerScavenge.toFixed(2).padStart(8)} ${cost.loopMs.toFixed(0).padStart(8)}${ratio}`,
  );
}
saveFigures(costs);

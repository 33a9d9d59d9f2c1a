/**
 * `npm run bench` (`-- --quick` in CI): runs every benchmark in a process of its own (so that
 * memory figures are not disturbed by the others), prints what each prints, and writes
 * `bench/report.md` and `bench/report.json` with the machine's details. Figures are printed, never
 * judged: the run fails only when a benchmark breaks.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, freemem, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { quick } from './options.js';
import { targetSummary, youngGenerationRuns } from './summary.js';

/** One benchmark script and what it measures. */
interface Benchmark {
  file: string;
  title: string;
  /** Names its figures when one script runs twice; the file's name otherwise. */
  id?: string;
  /** Node options beyond the runner's own. */
  nodeOptions?: string[];
  /** Arguments to the script beyond `--quick`. */
  args?: string[];
}

const { tuned, large } = youngGenerationRuns;

const benchmarks: Benchmark[] = [
  { file: 'http.ts', title: 'HTTP throughput against the bare frameworks (autocannon)' },
  { file: 'redis-round-trips.ts', title: 'Redis round trips per HTTP call' },
  { file: 'in-process.ts', title: 'Hot paths in process' },
  { file: 'profile.ts', title: 'Where the CPU of a send, a status read and an expiry goes (profile)' },
  { file: 'allocation.ts', title: 'What a send, a status read and an expiry allocate' },
  { file: 'retention-memory.ts', title: 'Memory over many sends with a short retention' },
  { file: 'standalone-memory.ts', title: 'Memory of the standalone service over many sends over HTTP' },
  { file: 'pending-scale.ts', title: 'Pending interactive requests: bytes and expiries' },
  {
    file: 'pending-scale.ts',
    id: tuned.id,
    title: `Pending interactive requests on memory, with Node's ${tuned.flag}`,
    nodeOptions: [tuned.flag],
    args: ['--memory-only'],
  },
  {
    file: 'pending-scale.ts',
    id: large.id,
    title: `The largest number pending on memory, with Node's ${large.flag}`,
    nodeOptions: [large.flag],
    args: ['--memory-only', '--largest-only'],
  },
  { file: 'scavenge-cost.ts', title: 'What a young-generation collection costs as the old generation grows' },
  { file: 'dispatch.ts', title: 'Request machine dispatch' },
  { file: 'fan-out.ts', title: 'Fan-out to 50 recipients through Slack' },
  { file: 'markdown.ts', title: 'Markdown parsing' },
];

/** What one benchmark left. */
interface Outcome {
  id: string;
  file: string;
  title: string;
  ok: boolean;
  exitCode: number | null;
  seconds: number;
  output: string;
  figures: unknown;
}

const here = fileURLToPath(new URL('.', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'chat-notify-bench-'));

async function run(benchmark: Benchmark): Promise<Outcome> {
  const id = benchmark.id ?? benchmark.file;
  const figuresPath = join(scratch, `${id}.json`);
  const started = performance.now();
  const child = spawn(
    process.execPath,
    // A heap as large as the machine allows: a million pending requests do not fit in Node's default.
    [
      '--expose-gc',
      '--max-old-space-size=16384',
      ...(benchmark.nodeOptions ?? []),
      '--import',
      'tsx',
      join(here, benchmark.file),
      ...(quick ? ['--quick'] : []),
      ...(benchmark.args ?? []),
    ],
    { env: { ...process.env, BENCH_FIGURES: figuresPath }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      process.stdout.write(chunk);
    });
  }
  const exitCode = await new Promise<number | null>((resolve) => child.on('close', resolve));
  let figures: unknown = null;
  try {
    figures = JSON.parse(readFileSync(figuresPath, 'utf8'));
  } catch {
    // A benchmark that only prints leaves no figures.
  }
  return {
    id,
    file: benchmark.file,
    title: benchmark.title,
    ok: exitCode === 0,
    exitCode,
    seconds: (performance.now() - started) / 1000,
    output,
    figures,
  };
}

const machine = {
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
  cpus: cpus().map(({ model, speed }) => ({ model, speed })),
  memory: { totalBytes: totalmem(), freeBytesAtStart: freemem() },
  quick,
  date: new Date().toISOString(),
};

const outcomes: Outcome[] = [];
for (const benchmark of benchmarks) {
  console.log(`\n=== ${benchmark.title} (bench/${benchmark.file})\n`);
  outcomes.push(await run(benchmark));
}
rmSync(scratch, { recursive: true, force: true });

const cpuLine = `${machine.cpus.length} × ${machine.cpus[0]?.model ?? 'unknown'}`;
const markdown = [
  '# Benchmark report',
  '',
  `Written by \`npm run bench${quick ? ' -- --quick' : ''}\` on ${machine.date}. Figures are printed, never judged;`,
  'each ratio is against a baseline measured in the same run. Structured figures: `bench/report.json`.',
  '',
  `- Node ${machine.node} on ${machine.platform}`,
  `- CPU: ${cpuLine}`,
  `- Memory: ${(machine.memory.totalBytes / 2 ** 30).toFixed(1)} GiB (${(machine.memory.freeBytesAtStart / 2 ** 30).toFixed(1)} GiB free at start)`,
  quick ? '- **Quick run** (CI): short durations and small sizes; figures are indicative only.' : '',
  '',
  ...targetSummary(new Map(outcomes.map((outcome) => [outcome.id, outcome.figures]))),
  ...outcomes.flatMap((outcome) => [
    `## ${outcome.title}`,
    '',
    `\`bench/${outcome.file}${outcome.id === outcome.file ? '' : ` (${outcome.id})`}\`, ${outcome.seconds.toFixed(1)} s${outcome.ok ? '' : `, **failed** (exit code ${outcome.exitCode})`}`,
    '',
    '```text',
    outcome.output.trimEnd(),
    '```',
    '',
  ]),
].join('\n');

writeFileSync(join(here, 'report.md'), markdown);
writeFileSync(
  join(here, 'report.json'),
  `${JSON.stringify(
    {
      machine,
      benchmarks: outcomes.map(({ output: _output, ...rest }) => rest),
    },
    null,
    2,
  )}\n`,
);
const failed = outcomes.filter((outcome) => !outcome.ok);
console.log(
  `\nWrote bench/report.md and bench/report.json; ${outcomes.length - failed.length} of ${outcomes.length} benchmarks ran.`,
);
if (failed.length > 0) {
  console.error(`Broken: ${failed.map((outcome) => outcome.id).join(', ')}`);
  process.exitCode = 1;
}

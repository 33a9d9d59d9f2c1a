/**
 * Memory of the standalone service (as `npm start` runs it: memory storage, the inbox) over many
 * sends with a short retention: the service runs in a process of its own, autocannon sends
 * fire-and-forget messages to it over HTTP at a capped rate, and its resident memory (`VmRSS`) is read after each
 * tenth of the run (each quarter in the quick run). Once the first sends have expired, memory must stay flat however many more go
 * out; the figures are its range and its trend per send from the first checkpoint on.
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { demoApiKey } from '../examples/standalone/demo-seed.js';
import { plainBody } from '../test/support/api-requests.js';
import { startStandaloneProcess } from '../test/support/standalone-process.js';
import { saveFigures, sized } from './options.js';

const sends = sized(1_000_000, 2_000);
/** Memory readings after the start. */
const checkpoints = sized(10, 4);
/** autocannon ends a run at its next sample: a quick run's few sends need not wait a second each. */
const sampleMs = sized(1000, 100);
const retentionSeconds = 5;
const unlimited = '1000000000/1000000000';
/**
 * The service's heap limit: a few times what it holds in steady state. Resident memory follows the
 * collector's rhythm, but a service that kept as little as 100 bytes per send would run out of this
 * heap long before the last send, and the benchmark would fail.
 */
const heapLimitMiB = 160;
/**
 * Sends per second, at most. What the service holds is the sends of the last retention period,
 * so it grows with the rate: capped, the heap it needs is the same on a fast machine as on a slow
 * one (at 10,000 a second, about twice what a 5 s retention needed at 5,800, the limit above runs
 * out within 10 s).
 */
const overallRate = 5_000;

const service = await startStandaloneProcess({
  NODE_OPTIONS: `--max-old-space-size=${heapLimitMiB}`,
  NOTIFY_RETENTION_DAYS: String(retentionSeconds / 86_400),
  NOTIFY_RATE_LIMIT_PER_KEY: unlimited,
  NOTIFY_RATE_LIMIT_PER_ORGANIZATION: unlimited,
});

/** The service's resident memory in MiB, as Linux reports it; NaN where /proc is missing. */
function residentMiB(): number {
  try {
    const status = readFileSync(`/proc/${service.child.pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024;
  } catch {
    return Number.NaN;
  }
}

const body = plainBody(['bob@acme.test', 'carol@acme.test']);
const samples: { sends: number; residentMiB: number; seconds: number }[] = [
  { sends: 0, residentMiB: residentMiB(), seconds: 0 },
];
const started = performance.now();
let failed = 0;
for (let checkpoint = 1; checkpoint <= checkpoints; checkpoint += 1) {
  const result = await autocannon({
    url: `${service.base}/api/notify`,
    connections: 20,
    overallRate,
    amount: sends / checkpoints,
    sampleInt: sampleMs,
    method: 'POST',
    headers: { 'x-api-key': demoApiKey, 'content-type': 'application/json' },
    body,
  });
  failed += result.non2xx + result.errors;
  samples.push({
    sends: (checkpoint * sends) / checkpoints,
    residentMiB: residentMiB(),
    seconds: (performance.now() - started) / 1000,
  });
}
const exitCode = await service.stop();
if (exitCode !== 0) throw new Error(`the service exited with ${exitCode} (out of memory?)`);

console.log(
  `standalone service, memory storage and inbox, retention ${retentionSeconds} s, heap limited to ${heapLimitMiB} MiB;\n` +
    `${sends.toLocaleString('en')} fire-and-forget sends to 2 recipients over HTTP, at most ${overallRate.toLocaleString('en')} a second\n`,
);
console.log(`${'sends'.padStart(10)} ${'RSS MiB'.padStart(9)} ${'elapsed s'.padStart(10)}`);
for (const sample of samples) {
  console.log(
    `${sample.sends.toLocaleString('en').padStart(10)} ${sample.residentMiB.toFixed(1).padStart(9)} ${sample.seconds.toFixed(0).padStart(10)}`,
  );
}
// Resident memory follows the collector's rhythm (a heap grows until it is collected), so the trend
// is a least-squares fit over every checkpoint after the first, with the range beside it.
const settled = samples.slice(1);
const meanSends = settled.reduce((sum, sample) => sum + sample.sends, 0) / settled.length;
const meanMiB = settled.reduce((sum, sample) => sum + sample.residentMiB, 0) / settled.length;
const covariance = settled.reduce((sum, s) => sum + (s.sends - meanSends) * (s.residentMiB - meanMiB), 0);
const variance = settled.reduce((sum, s) => sum + (s.sends - meanSends) ** 2, 0);
const bytesPerSend = (covariance / variance) * 2 ** 20;
const lowest = Math.min(...settled.map((sample) => sample.residentMiB));
const highest = Math.max(...settled.map((sample) => sample.residentMiB));
console.log(
  `\nfrom ${settled[0]?.sends.toLocaleString('en')} sends on: resident memory between ${lowest.toFixed(0)} and ${highest.toFixed(0)} MiB, ` +
    `trend ${bytesPerSend.toFixed(1)} bytes per send (least squares; flat is about 0)${failed > 0 ? `; ${failed} sends failed!` : ''}`,
);
saveFigures({
  sends,
  retentionSeconds,
  samples,
  bytesPerSend,
  lowestMiB: lowest,
  highestMiB: highest,
  failed,
});

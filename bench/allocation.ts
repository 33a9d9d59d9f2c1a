/**
 * What the hot paths allocate: bytes per fire-and-forget send, per status read and per expiry (an
 * interactive request to 3 recipients timing out, every copy updated), short-lived objects included,
 * against what parsing and validating a send body allocates, measured in the same run. Allocation,
 * not time, is what makes the young-generation collections that weigh on a large heap
 * (docs/performance.md#many-pending-requests-the-young-generation). V8's sampling heap profiler,
 * started in process through the inspector, keeping the samples of collected objects; the functions
 * that allocate most are listed by self bytes.
 */

import { Session } from 'node:inspector/promises';
import { memoryStorage } from '../adapters/storage/memory/index.js';
import { notifyRequestSchema } from '../core/schemas/notify-request.js';
import { interactiveBody, plainBody, post, readStatus } from '../test/support/api-requests.js';
import { benchNotifier } from './bench-notifier.js';
import { saveFigures, sized } from './options.js';

/** The part of a sampled heap profile this summary reads. */
interface ProfileNode {
  callFrame: { functionName: string; url: string };
  selfSize: number;
  children: ProfileNode[];
}

/** Samples one allocated object in this many bytes, on average. */
const samplingInterval = 512;

/** Bytes `run` allocates per call over `count` calls, and the functions that allocate most. */
async function allocation(
  count: number,
  run: (index: number) => Promise<unknown> | unknown,
): Promise<{ bytesPerCall: number; functions: [string, number][] }> {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  for (let index = 0; index < count; index += 1) await run(index);
  const { profile } = await session.post('HeapProfiler.stopSampling');
  session.disconnect();
  const functions = new Map<string, number>();
  let total = 0;
  const walk = (node: ProfileNode): void => {
    const file = node.callFrame.url.split('/').pop() ?? '';
    const name = `${node.callFrame.functionName || '(anonymous)'}${file ? ` (${file})` : ''}`;
    functions.set(name, (functions.get(name) ?? 0) + node.selfSize);
    total += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(profile.head as ProfileNode);
  const top = [...functions]
    .map(([name, bytes]): [string, number] => [name, bytes / count])
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8);
  return { bytesPerCall: total / count, functions: top };
}

const calls = sized(20_000, 1_000);
const plain = plainBody();
const figures: Record<string, { bytesPerCall: number; functions: [string, number][] }> = {};
const show = (
  name: string,
  measured: { bytesPerCall: number; functions: [string, number][] },
  against?: number,
) => {
  figures[name] = measured;
  const ratio =
    against === undefined ? '' : `  ${(measured.bytesPerCall / against).toFixed(1).padStart(5)}x baseline`;
  console.log(`${name.padEnd(46)} ${measured.bytesPerCall.toFixed(0).padStart(7)} bytes per call${ratio}`);
  for (const [fn, bytes] of measured.functions) console.log(`    ${bytes.toFixed(0).padStart(6)}  ${fn}`);
};

const baseline = await allocation(calls, () => notifyRequestSchema.parse(JSON.parse(plain)));
show('baseline: JSON.parse + schema validation', baseline);

// Sends and status reads with the notifier warmed up, its stores holding a retention's worth.
const notifier = await benchNotifier(memoryStorage(), { retention: 10_000 });
for (let i = 0; i < calls / 4; i += 1) await post(notifier, plain);
show(
  'fire-and-forget send, 1 recipient',
  await allocation(calls, () => post(notifier, plain)),
  baseline.bytesPerCall,
);
const created = await post(notifier, interactiveBody());
const { request_id: requestId } = JSON.parse(created?.body ?? '{}') as { request_id: string };
show('status read', await allocation(calls, () => readStatus(notifier, requestId)), baseline.bytesPerCall);
await notifier.stop();

// Expiries in virtual time: every request falls due at once and `runDueWork` runs them all.
let now = Date.UTC(2030, 0, 1);
const expiring = await benchNotifier(memoryStorage(), { clock: { now: () => now } });
const dueSoon = interactiveBody(
  ['bob@acme.test', 'carol@acme.test', 'dave@acme.test'],
  30,
  'Approve the deploy of *v2.3*?',
);
for (let i = 0; i < calls; i += 1) await post(expiring, dueSoon);
now += 31 * 60_000;
let expired = 0;
const expiries = await allocation(1, async () => {
  for (let ran = await expiring.runDueWork(); ran > 0; ran = await expiring.runDueWork()) expired += ran;
});
await expiring.stop();
if (expired !== calls) throw new Error(`${expired} requests expired, not the ${calls} sent`);
show(
  'expiry, 3 recipients (memory, inbox)',
  {
    bytesPerCall: expiries.bytesPerCall / calls,
    functions: expiries.functions.map(([name, bytes]) => [name, bytes / calls]),
  },
  baseline.bytesPerCall,
);
console.log(
  `\nV8's sampling heap profiler (one sample per ${samplingInterval} bytes on average, collected objects kept),\n` +
    `${calls.toLocaleString('en')} calls of each; the functions are the largest by self bytes per call.`,
);
saveFigures(figures);

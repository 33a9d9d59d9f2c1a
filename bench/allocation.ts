/**
 * What the hot paths allocate: bytes per fire-and-forget send, per status read and per expiry (an
 * interactive request to 3 recipients timing out, every copy updated), short-lived objects included,
 * against what parsing and validating a send body allocates, measured in the same run. Allocation,
 * not time, is what makes the young-generation collections that weigh on a large heap
 * (docs/performance.md#many-pending-requests-the-young-generation). V8's sampling heap profiler,
 * started in process through the inspector, keeping the samples of collected objects; the functions
 * that allocate most are listed by self bytes. Also the promises each call creates as an async hook
 * sees them: with a hook on, V8 also makes a promise for every `await`, so the count is of the
 * asynchronous steps, each a microtask whether a hook is on or not. A count that, unlike time, does
 * not change with the machine, so that a change of a few per cent in the work of a path shows where
 * timings on a noisy machine cannot.
 */

import { createHook } from 'node:async_hooks';
import { Session } from 'node:inspector/promises';
import { GCProfiler, type HeapSpaceStatistics } from 'node:v8';
import { memoryStorage } from '../adapters/storage/memory/index.js';
import { notifyRequestSchema } from '../core/schemas/notify-request.js';
import { interactiveBody, plainBody, post, readStatus } from '../test/support/api-requests.js';
import { benchNotifier } from './bench-notifier.js';
import { saveFigures, settledHeap, sized } from './options.js';

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

/** Promises created per call over `count` calls of `run`, each awaited before the next. */
async function promisesPerCall(count: number, run: () => Promise<unknown>): Promise<number> {
  let created = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === 'PROMISE') created += 1;
    },
  });
  hook.enable();
  for (let index = 0; index < count; index += 1) await run();
  hook.disable();
  return created / count;
}

/** Bytes of the old generation in use: its paged space and its space for large objects. */
const oldGeneration = (spaces: readonly HeapSpaceStatistics[]): number =>
  spaces
    .filter(({ spaceName }) => spaceName === 'old_space' || spaceName === 'large_object_space')
    .reduce((sum, { spaceUsedSize }) => sum + spaceUsedSize, 0);

/**
 * Per call over `count` calls of `run`: the bytes that young-generation collections moved to the old
 * generation (`v8.GCProfiler`: the old generation's growth across each), and the bytes still in use
 * after a full collection once all have run (with `--expose-gc`, as `npm run bench` runs it; null
 * without). Moved and not kept is garbage left in the old generation until a full collection: it
 * grows the heap, and every young collection costs more beside a larger one.
 */
async function promotion(
  count: number,
  run: () => Promise<unknown>,
): Promise<{ promotedPerCall: number; keptPerCall: number | null }> {
  const collects = typeof (globalThis as { gc?: unknown }).gc === 'function';
  const before = settledHeap();
  const profiler = new GCProfiler();
  profiler.start();
  for (let index = 0; index < count; index += 1) await run();
  let promoted = 0;
  for (const { gcType, beforeGC, afterGC } of profiler.stop().statistics) {
    if (gcType === 'Scavenge') {
      promoted += oldGeneration(afterGC.heapSpaceStatistics) - oldGeneration(beforeGC.heapSpaceStatistics);
    }
  }
  return {
    promotedPerCall: promoted / count,
    keptPerCall: collects ? (settledHeap() - before) / count : null,
  };
}

const calls = sized(20_000, 1_000);
const plain = plainBody();
/** What one path allocates per call, the functions that allocate most, and its promises per call. */
interface PathFigures {
  bytesPerCall: number;
  functions: [string, number][];
  promisesPerCall?: number;
  promotedPerCall?: number;
  keptPerCall?: number | null;
}
const figures: Record<string, PathFigures> = {};
const show = (name: string, measured: PathFigures, against?: number) => {
  figures[name] = measured;
  const ratio =
    against === undefined ? '' : `  ${(measured.bytesPerCall / against).toFixed(1).padStart(5)}x baseline`;
  const promises =
    measured.promisesPerCall === undefined ? '' : `, ${measured.promisesPerCall.toFixed(1)} promises`;
  const kept = measured.keptPerCall == null ? '' : `, ${measured.keptPerCall.toFixed(0)} kept`;
  const promoted =
    measured.promotedPerCall === undefined ? '' : `, ${measured.promotedPerCall.toFixed(0)} promoted${kept}`;
  console.log(
    `${name.padEnd(46)} ${measured.bytesPerCall.toFixed(0).padStart(7)} bytes per call${ratio}${promises}${promoted}`,
  );
  for (const [fn, bytes] of measured.functions) console.log(`    ${bytes.toFixed(0).padStart(6)}  ${fn}`);
};

const baseline = await allocation(calls, () => notifyRequestSchema.parse(JSON.parse(plain)));
show('baseline: JSON.parse + schema validation', baseline);

// Sends and status reads with the notifier warmed up, its stores holding a retention's worth.
const notifier = await benchNotifier(memoryStorage(), { retention: 10_000 });
for (let i = 0; i < calls / 4; i += 1) await post(notifier, plain);
const send = () => post(notifier, plain);
show(
  'fire-and-forget send, 1 recipient',
  { ...(await allocation(calls, send)), promisesPerCall: await promisesPerCall(calls, send) },
  baseline.bytesPerCall,
);
const created = await post(notifier, interactiveBody());
const { request_id: requestId } = JSON.parse(created?.body ?? '{}') as { request_id: string };
const status = () => readStatus(notifier, requestId);
show(
  'status read',
  { ...(await allocation(calls, status)), promisesPerCall: await promisesPerCall(calls, status) },
  baseline.bytesPerCall,
);
await notifier.stop();

const dueSoon = interactiveBody(
  ['bob@acme.test', 'carol@acme.test', 'dave@acme.test'],
  30,
  'Approve the deploy of *v2.3*?',
);

// Interactive sends left pending, as bench/pending-scale.ts leaves 1,000,000: besides what they
// allocate, what the young-generation collections move to the old generation, and what stays.
const stillNow = Date.UTC(2030, 0, 1);
const pending = await benchNotifier(memoryStorage(), { clock: { now: () => stillNow } });
const sendPending = () => post(pending, dueSoon);
for (let i = 0; i < calls / 4; i += 1) await sendPending();
show(
  'interactive send, 3 recipients, left pending',
  {
    ...(await allocation(calls, sendPending)),
    promisesPerCall: await promisesPerCall(calls, sendPending),
    ...(await promotion(calls, sendPending)),
  },
  baseline.bytesPerCall,
);
await pending.stop();

// Expiries in virtual time: every request falls due at once and `runDueWork` runs them all.
let now = Date.UTC(2030, 0, 1);
const expiring = await benchNotifier(memoryStorage(), { clock: { now: () => now } });
/** Sends `calls` requests that fall due at once, then runs them all out through `measure`. */
const expireAll = async <T>(measure: (runAll: () => Promise<void>) => Promise<T>): Promise<T> => {
  for (let i = 0; i < calls; i += 1) await post(expiring, dueSoon);
  now += 31 * 60_000;
  let expired = 0;
  const measured = await measure(async () => {
    for (let ran = await expiring.runDueWork(); ran > 0; ran = await expiring.runDueWork()) expired += ran;
  });
  if (expired !== calls) throw new Error(`${expired} requests expired, not the ${calls} sent`);
  return measured;
};
const expiries = await expireAll((runAll) => allocation(1, runAll));
const expiryPromises = await expireAll((runAll) => promisesPerCall(1, runAll));
await expiring.stop();
show(
  'expiry, 3 recipients (memory, inbox)',
  {
    bytesPerCall: expiries.bytesPerCall / calls,
    functions: expiries.functions.map(([name, bytes]) => [name, bytes / calls]),
    promisesPerCall: expiryPromises / calls,
  },
  baseline.bytesPerCall,
);
console.log(
  `\nV8's sampling heap profiler (one sample per ${samplingInterval} bytes on average, collected objects kept),\n` +
    `${calls.toLocaleString('en')} calls of each; the functions are the largest by self bytes per call.\n` +
    'Promises: created per call as an async hook sees them (with a hook on, every await makes one), over\n' +
    'as many calls again; the handler in process, as for the bytes: a send body given as an array of\n' +
    'chunks, not a socket. Promoted: bytes per call that young-generation collections moved to the old\n' +
    'generation (v8.GCProfiler), over as many calls again; kept: bytes per call still in use after a\n' +
    'full collection. Promoted and not kept is garbage that stays in the old generation until a full\n' +
    'collection.',
);
saveFigures(figures);

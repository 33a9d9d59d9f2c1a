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

const calls = sized(20_000, 1_000);
const plain = plainBody();
/** What one path allocates per call, the functions that allocate most, and its promises per call. */
interface PathFigures {
  bytesPerCall: number;
  functions: [string, number][];
  promisesPerCall?: number;
}
const figures: Record<string, PathFigures> = {};
const show = (name: string, measured: PathFigures, against?: number) => {
  figures[name] = measured;
  const ratio =
    against === undefined ? '' : `  ${(measured.bytesPerCall / against).toFixed(1).padStart(5)}x baseline`;
  const promises =
    measured.promisesPerCall === undefined ? '' : `, ${measured.promisesPerCall.toFixed(1)} promises`;
  console.log(
    `${name.padEnd(46)} ${measured.bytesPerCall.toFixed(0).padStart(7)} bytes per call${ratio}${promises}`,
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

// Expiries in virtual time: every request falls due at once and `runDueWork` runs them all.
let now = Date.UTC(2030, 0, 1);
const expiring = await benchNotifier(memoryStorage(), { clock: { now: () => now } });
const dueSoon = interactiveBody(
  ['bob@acme.test', 'carol@acme.test', 'dave@acme.test'],
  30,
  'Approve the deploy of *v2.3*?',
);
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
    'chunks, not a socket.',
);
saveFigures(figures);

/**
 * Where the CPU of the hot paths goes: a sampling CPU profile (the V8 profiler `node --cpu-prof`
 * uses, started in process through the inspector) of fire-and-forget sends and of status reads
 * through the notifier's handler (memory storage, inbox; the framework is left out, it costs the
 * same in the bare app), and of expiries (interactive requests to 3 recipients falling due at once,
 * `runDueWork` in virtual time), summarized as the share of samples by area and by function. The
 * shares, not the times, are the figures: they say what dominates on any machine.
 */

import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import { memoryStorage } from '../adapters/storage/memory/index.js';
import { interactiveBody, plainBody, post, readStatus } from '../test/support/api-requests.js';
import { benchNotifier } from './bench-notifier.js';
import { saveFigures, sized } from './options.js';

/** The part of a V8 CPU profile this summary reads. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string } }[];
  samples: number[];
  timeDeltas: number[];
}

/** A profile and the time per call it measured. */
interface Measured {
  profile: CpuProfile;
  microseconds: number;
}

const root = fileURLToPath(new URL('..', import.meta.url));
const notifier = await benchNotifier(memoryStorage(), { retention: 10_000 });

const sendBody = plainBody();
const send = () => post(notifier, sendBody);
const interactive = await post(notifier, interactiveBody());
const { request_id: requestId } = JSON.parse(interactive?.body ?? '{}') as { request_id: string };
const status = () => readStatus(notifier, requestId);

/** The area of the code a frame belongs to: one of ours by directory, a dependency by package, or V8's. */
function areaOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (dependency) return `dependency ${dependency[1]}`;
  if (!path.startsWith(root)) return 'other';
  const parts = path.slice(root.length).split('/');
  return parts.slice(0, Math.min(parts.length - 1, parts[0] === 'adapters' ? 3 : 2)).join('/');
}

/** A share of the samples, by name, largest first. */
type Shares = [string, number][];

function summarize(profile: CpuProfile): { areas: Shares; functions: Shares } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, index) => {
    const frame = byId.get(id);
    const time = profile.timeDeltas[index] ?? 0;
    // The first sample's delta runs from the start of the profile, before sampling began: it was
    // hundreds of times a sample's and gave the inspector's `dispatch` up to 8% of an expiry's.
    if (!frame || index === 0) return;
    total += time;
    const area = areaOf(frame.url, frame.functionName);
    areas.set(area, (areas.get(area) ?? 0) + time);
    const file = frame.url.split('/').pop() ?? '';
    const name = `${frame.functionName || '(anonymous)'} ${file ? `(${file})` : `[${area}]`}`;
    functions.set(name, (functions.get(name) ?? 0) + time);
  });
  const shares = (map: Map<string, number>): Shares =>
    [...map].map(([name, time]): [string, number] => [name, time / total]).sort((a, b) => b[1] - a[1]);
  return { areas: shares(areas), functions: shares(functions) };
}

/** Profiles `count` calls of `operation`, after warming it up, and answers the time per call. */
async function profileOf(
  operation: () => Promise<{ status: number; body: string } | null>,
  count: number,
): Promise<Measured> {
  const first = await operation();
  // A profile of error answers would describe the wrong path.
  if (first?.status !== 200) throw new Error(`the profiled call answered ${first?.status}: ${first?.body}`);
  // Warm up first, so that the profile shows the optimized steady state, not compilation.
  for (let i = 0; i < count / 10; i += 1) await operation();
  return profiled(count, async () => {
    for (let i = 0; i < count; i += 1) {
      await operation();
      // Lets the work a send leaves behind (timers, sweeps) run inside the profile too.
      if (i % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
  });
}

/** A CPU profile of `run`, which makes `count` calls, and the time per call. */
async function profiled(count: number, run: () => Promise<void>): Promise<Measured> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 50 });
  await session.post('Profiler.start');
  const started = performance.now();
  await run();
  const microseconds = ((performance.now() - started) * 1000) / count;
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  return { profile: profile as CpuProfile, microseconds };
}

/**
 * A profile of `count` expiries: as many interactive requests to 3 recipients sent and left
 * pending, then all falling due at once (virtual time), every copy in the inbox updated.
 */
async function profileOfExpiries(count: number): Promise<Measured> {
  let now = Date.UTC(2030, 0, 1);
  const expiring = await benchNotifier(memoryStorage(), { clock: { now: () => now } });
  const dueSoon = interactiveBody(['bob@acme.test', 'carol@acme.test', 'dave@acme.test'], 30);
  for (let i = 0; i < count; i += 1) await post(expiring, dueSoon);
  now += 31 * 60_000;
  let expired = 0;
  const measured = await profiled(count, async () => {
    for (let ran = await expiring.runDueWork(); ran > 0; ran = await expiring.runDueWork()) expired += ran;
  });
  await expiring.stop();
  if (expired !== count) throw new Error(`${expired} requests expired, not the ${count} sent`);
  return measured;
}

const percent = (share: number): string => `${(share * 100).toFixed(1).padStart(5)}%`;
const figures: Record<string, { microseconds: number; areas: Shares; functions: Shares }> = {};
const runs: [string, number, (count: number) => Promise<Measured>][] = [
  ['fire-and-forget send, 1 recipient', sized(40_000, 2_000), (count) => profileOf(send, count)],
  ['status read', sized(100_000, 5_000), (count) => profileOf(status, count)],
  ['expiry, 3 recipients (inbox)', sized(50_000, 1_000), profileOfExpiries],
];
for (const [name, count, measure] of runs) {
  const { profile, microseconds } = await measure(count);
  const summary = summarize(profile);
  figures[name] = {
    microseconds,
    areas: summary.areas.slice(0, 12),
    functions: summary.functions.slice(0, 15),
  };
  console.log(
    `${name}: ${microseconds.toFixed(1)} µs per call while profiled; share of CPU samples (${count} calls)\n  by area:`,
  );
  for (const [area, share] of summary.areas.slice(0, 12)) console.log(`  ${percent(share)}  ${area}`);
  console.log('  by function (self time):');
  for (const [fn, share] of summary.functions.slice(0, 15)) console.log(`  ${percent(share)}  ${fn}`);
  console.log('');
}

/**
 * What dominated before the performance work, as this benchmark measured it then (commit `b38d9f5`,
 * on that round's machine; docs/performance-history.md): recorded, not measured in this run, so
 * that the report says what dominated before beside what dominates now.
 */
const before: Record<string, { microseconds: number; dominated: string }> = {
  'fire-and-forget send, 1 recipient': {
    microseconds: 73,
    dominated:
      'line-index table allocation 12%, garbage collection 11%, inbox write 5%, router 4%, id generation 3%',
  },
  'status read': {
    microseconds: 11.5,
    dominated:
      'router 12%, ipaddr.js parsing the socket address 9% (by area), JSON answer 8%, garbage collection 8%, SHA-256 of the key 7%',
  },
};
console.log(
  "What dominated before the performance work (commit b38d9f5, recorded on that round's machine) and now\n" +
    '(this run; self time by function, areas in the lists above):',
);
for (const [name, then] of Object.entries(before)) {
  const now = figures[name];
  // A run renamed without its record here would drop the comparison from the report unseen.
  if (!now) throw new Error(`no run named "${name}" to set beside what dominated before`);
  const top = now.functions
    .slice(0, 5)
    .map(([fn, share]) => `${fn} ${(share * 100).toFixed(0)}%`)
    .join(', ');
  console.log(
    `  ${name}\n    before: ${then.microseconds} µs; ${then.dominated}\n    now:    ${now.microseconds.toFixed(1)} µs; ${top}`,
  );
}
saveFigures(figures);
await notifier.stop();

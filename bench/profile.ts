/**
 * Where the CPU of the hot paths goes: a sampling CPU profile (the V8 profiler `node --cpu-prof`
 * uses, started in process through the inspector) of fire-and-forget sends and of status reads
 * through the notifier's handler (memory storage, inbox; the framework is left out, it costs the
 * same in the bare app), summarized as the share of samples by area and by function. The shares,
 * not the times, are the figures: they say what dominates on any machine.
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
    if (!frame) return;
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

async function profileOf(
  operation: () => Promise<{ status: number; body: string } | null>,
  count: number,
): Promise<{ profile: CpuProfile; microseconds: number }> {
  const first = await operation();
  // A profile of error answers would describe the wrong path.
  if (first?.status !== 200) throw new Error(`the profiled call answered ${first?.status}: ${first?.body}`);
  // Warm up first, so that the profile shows the optimized steady state, not compilation.
  for (let i = 0; i < count / 10; i += 1) await operation();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 50 });
  await session.post('Profiler.start');
  const started = performance.now();
  for (let i = 0; i < count; i += 1) {
    await operation();
    // Lets the work a send leaves behind (timers, sweeps) run inside the profile too.
    if (i % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  const microseconds = ((performance.now() - started) * 1000) / count;
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  return { profile: profile as CpuProfile, microseconds };
}

const percent = (share: number): string => `${(share * 100).toFixed(1).padStart(5)}%`;
const figures: Record<string, { microseconds: number; areas: Shares; functions: Shares }> = {};
for (const [name, operation, count] of [
  ['fire-and-forget send, 1 recipient', send, sized(40_000, 2_000)],
  ['status read', status, sized(100_000, 5_000)],
] as const) {
  const { profile, microseconds } = await profileOf(operation, count);
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
saveFigures(figures);
await notifier.stop();

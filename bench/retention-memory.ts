/**
 * Heap of a notifier on memory storage with the inbox (the standalone service's default) over many
 * fire-and-forget and interactive sends, with a short retention: once the first sends expire, the
 * heap must stay flat however many more go out. Virtual time: each send advances the clock 1 ms
 * (10 ms in the quick run, so that it too reaches the steady state) and the retention is 10 s, so
 * about 10,000 sends (1,000) are live at any moment. The steady state begins once the first
 * interactive requests have timed out (1 minute) and their retention has passed: from there on,
 * the figure printed is the heap's growth per send between the checkpoints. (The inbox's lists of
 * open copies are read for two periods of about three minutes each, so their entries, about 2 MB,
 * fill for a few hundred thousand sends more: within the checkpoints' noise.) The request machine
 * runs on a virtual-time scheduler too, so that its timers (back-offs after lost writes) keep the
 * same time as the store.
 */

import { VirtualTimeScheduler } from 'rxjs';
import { memoryStorage } from '../adapters/storage/memory/index.js';
import { interactiveBody, plainBody, post } from '../test/support/api-requests.js';
import { benchNotifier } from './bench-notifier.js';
import { saveFigures, settledHeap, sized } from './options.js';

const sends = sized(1_000_000, 20_000);
const checkpoints = 10;
const retention = 10_000;
const msPerSend = sized(1, 10);
const timeoutMs = 60_000;
/** Sends after which as many sends expire as go out: the first timeouts plus their retention. */
const steadyFrom = (timeoutMs + retention) / msPerSend;
let now = Date.UTC(2030, 0, 1);
const clock = { now: () => now };
const scheduler = new VirtualTimeScheduler();
const notifier = await benchNotifier(memoryStorage({ clock }), { clock, retention, scheduler });

const plain = plainBody(['bob@acme.test', 'carol@acme.test']);
const interactive = interactiveBody(['bob@acme.test'], timeoutMs / 60_000);

console.log(
  `${sends.toLocaleString('en')} sends (one in ten interactive, timing out after 1 minute), retention ${retention / 1000} s of virtual time, ${msPerSend} ms per send\n`,
);
const heap: Array<{ sends: number; heapMiB: number }> = [{ sends: 0, heapMiB: settledHeap() / 2 ** 20 }];
console.log(`${'sends'.padStart(10)} ${'heap (MiB)'.padStart(11)}`);
console.log(`${'0'.padStart(10)} ${heap[0]!.heapMiB.toFixed(1).padStart(11)}`);
for (let i = 1; i <= sends; i += 1) {
  const answer = await post(notifier, i % 10 === 0 ? interactive : plain);
  if (answer?.status !== 200) throw new Error(`send ${i} answered ${answer?.status}: ${answer?.body}`);
  now += msPerSend;
  // Timeouts fall due as time passes; running them finishes the requests, which starts their retention.
  if (i % (1000 / msPerSend) === 0) {
    await notifier.runDueWork();
    // The machine's timers due by now (back-offs after lost writes) fire as virtual time passes.
    scheduler.flush();
  }
  if (i % (sends / checkpoints) === 0) {
    const mib = settledHeap() / 2 ** 20;
    heap.push({ sends: i, heapMiB: mib });
    console.log(`${i.toLocaleString('en').padStart(10)} ${mib.toFixed(1).padStart(11)}`);
  }
}
await notifier.stop();
const steady = heap.filter((checkpoint) => checkpoint.sends >= steadyFrom);
/** Least-squares slope of the heap over the steady checkpoints, in bytes per send: noise averages out. */
function growthPerSend(points: ReadonlyArray<{ sends: number; heapMiB: number }>): number {
  if (points.length < 2) return Number.NaN;
  const meanX = points.reduce((sum, p) => sum + p.sends, 0) / points.length;
  const meanY = points.reduce((sum, p) => sum + p.heapMiB, 0) / points.length;
  const covariance = points.reduce((sum, p) => sum + (p.sends - meanX) * (p.heapMiB - meanY), 0);
  const variance = points.reduce((sum, p) => sum + (p.sends - meanX) ** 2, 0);
  return (covariance / variance) * 2 ** 20;
}
const bytesPerSend = growthPerSend(steady);
console.log(
  `\nsteady state (from ${steadyFrom.toLocaleString('en')} sends: the first timeouts plus the retention), ` +
    `${steady.length} checkpoints from ${steady[0]?.heapMiB.toFixed(1)} to ${steady.at(-1)?.heapMiB.toFixed(1)} MiB: ` +
    `heap growth ${bytesPerSend.toFixed(1)} bytes per send (least squares; flat is about 0)`,
);
saveFigures({ sends, retentionMs: retention, msPerSend, heap, steadyFrom, bytesPerSend });

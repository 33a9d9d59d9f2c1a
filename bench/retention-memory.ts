/**
 * Heap of a notifier on memory storage with the inbox (the standalone service's default) over many
 * fire-and-forget and interactive sends, with a short retention: once the first sends expire, the
 * heap must stay flat however many more go out. Virtual time: each send advances the clock 1 ms and
 * the retention is 10 s, so about 10,000 sends are live at any moment. The request machine's timers
 * (a request's queue closes 30 s after its last event) run on a virtual-time scheduler too: on real
 * time they would outlive thousands of virtual seconds and hold every queue of the run.
 */
import { VirtualTimeScheduler } from 'rxjs';
import { inboxTransport } from '../adapters/chat/inbox/index.js';
import { memoryStorage } from '../adapters/storage/memory/index.js';
import { createNotifier } from '../core/notifier.js';
import { testKeys, testSeed } from '../test/support/test-seed.js';
import { saveFigures, settledHeap, sized } from './options.js';

const sends = sized(1_000_000, 20_000);
const checkpoints = 10;
const retention = 10_000;
let now = Date.UTC(2030, 0, 1);
const clock = { now: () => now };
const scheduler = new VirtualTimeScheduler();
const unlimited = { burst: 1e12, perSecond: 1e12 };
const notifier = createNotifier({
  storage: memoryStorage({ clock }),
  transports: [inboxTransport({ clock })],
  clock,
  rateLimits: { perKey: unlimited, perOrganization: unlimited },
  retention,
  scheduler,
});
await notifier.seed(testSeed);

const plain = JSON.stringify({ user_emails: ['bob@acme.test', 'carol@acme.test'], message: 'Deployed' });
const interactive = JSON.stringify({
  user_emails: ['bob@acme.test'],
  message: 'Approve?',
  response_request: {
    options: [
      { text: 'Yes', value: 'yes' },
      { text: 'No', value: 'no' },
    ],
    timeout_minutes: 1,
  },
});
const post = (body: string) =>
  notifier.handle({
    method: 'POST',
    url: '/api/notify',
    headers: { 'x-api-key': testKeys.alice, 'content-type': 'application/json' },
    body: [body],
    clientAddress: '127.0.0.1',
  });

console.log(
  `${sends.toLocaleString('en')} sends (one in ten interactive, timing out after 1 minute), retention ${retention / 1000} s of virtual time, 1 ms per send\n`,
);
const heap: Array<{ sends: number; heapMiB: number }> = [{ sends: 0, heapMiB: settledHeap() / 2 ** 20 }];
console.log(`${'sends'.padStart(10)} ${'heap (MiB)'.padStart(11)}`);
console.log(`${'0'.padStart(10)} ${heap[0]!.heapMiB.toFixed(1).padStart(11)}`);
for (let i = 1; i <= sends; i += 1) {
  const answer = await post(i % 10 === 0 ? interactive : plain);
  if (answer?.status !== 200) throw new Error(`send ${i} answered ${answer?.status}: ${answer?.body}`);
  now += 1;
  // Timeouts fall due as time passes; running them finishes the requests, which starts their retention.
  if (i % 1000 === 0) {
    await notifier.runDueWork();
    // The machine's timers due by now (idle queues closing) fire as virtual time passes.
    scheduler.flush();
  }
  if (i % (sends / checkpoints) === 0) {
    const mib = settledHeap() / 2 ** 20;
    heap.push({ sends: i, heapMiB: mib });
    console.log(`${i.toLocaleString('en').padStart(10)} ${mib.toFixed(1).padStart(11)}`);
  }
}
await notifier.stop();
const second = heap[2]?.heapMiB ?? 0;
const last = heap.at(-1)?.heapMiB ?? 0;
console.log(
  `\nheap growth from ${heap[2]?.sends.toLocaleString('en')} sends to the end: ${(last - second).toFixed(1)} MiB`,
);
saveFigures({ sends, retentionMs: retention, heap });
// Timers of the notifiers' idle request queues would hold the process for 30 s: the figures are in.
process.exit(0);

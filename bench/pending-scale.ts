/**
 * Scale of pending work: interactive requests to 3 recipients sent through the notifier (inbox
 * copies included) and left pending, at three sizes per store. Prints the bytes each pending
 * request costs (heap after a full collection on memory; Redis `used_memory`) and how fast they
 * expire when all fall due at once (`runDueWork` in virtual time: the timeouts, the stored
 * transitions and the updates of every copy).
 */
import { createClient } from 'redis';
import { inboxTransport } from '../adapters/chat/inbox/index.js';
import { memoryStorage } from '../adapters/storage/memory/index.js';
import { redisStorage } from '../adapters/storage/redis/index.js';
import { createNotifier } from '../core/notifier.js';
import type { StoragePorts } from '../core/ports/storage.js';
import { testKeys, testSeed } from '../test/support/test-seed.js';
import { saveFigures, settledHeap, sized } from './options.js';

const unlimited = { burst: 1e12, perSecond: 1e12 };
const body = JSON.stringify({
  user_emails: ['bob@acme.test', 'carol@acme.test', 'dave@acme.test'],
  message: 'Approve the deploy of *v2.3*?',
  response_request: {
    options: [
      { text: 'Approve', value: 'approve' },
      { text: 'Reject', value: 'reject' },
    ],
    timeout_minutes: 30,
  },
});

/** Figures of one size on one store. */
interface Scale {
  pending: number;
  bytesPerRequest: number;
  sendsPerSecond: number;
  expiriesPerSecond: number;
}

async function measure(
  pending: number,
  storage: StoragePorts,
  bytesInUse: () => Promise<number>,
  concurrency: number,
): Promise<Scale> {
  let now = Date.UTC(2030, 0, 1);
  const clock = { now: () => now };
  const notifier = createNotifier({
    storage,
    transports: [inboxTransport({ clock })],
    clock,
    rateLimits: { perKey: unlimited, perOrganization: unlimited },
  });
  await notifier.seed(testSeed);
  const before = await bytesInUse();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < pending) {
        next += 1;
        const answer = await notifier.handle({
          method: 'POST',
          url: '/api/notify',
          headers: { 'x-api-key': testKeys.alice, 'content-type': 'application/json' },
          body: [body],
          clientAddress: '127.0.0.1',
        });
        if (answer?.status !== 200) throw new Error(`send answered ${answer?.status}: ${answer?.body}`);
      }
    }),
  );
  const sendSeconds = (performance.now() - started) / 1000;
  const after = await bytesInUse();
  now += 31 * 60_000;
  const expiring = performance.now();
  let expired = 0;
  for (let ran = await notifier.runDueWork(); ran > 0; ran = await notifier.runDueWork()) expired += ran;
  const expirySeconds = (performance.now() - expiring) / 1000;
  await notifier.stop();
  if (expired !== pending) throw new Error(`${expired} of ${pending} requests expired`);
  return {
    pending,
    bytesPerRequest: (after - before) / pending,
    sendsPerSecond: pending / sendSeconds,
    expiriesPerSecond: pending / expirySeconds,
  };
}

const line = (store: string, scale: Scale): string =>
  `${store.padEnd(7)} ${scale.pending.toLocaleString('en').padStart(10)} ${scale.bytesPerRequest.toFixed(0).padStart(14)} ${scale.sendsPerSecond.toFixed(0).padStart(10)} ${scale.expiriesPerSecond.toFixed(0).padStart(12)}`;

console.log(
  `${'store'.padEnd(7)} ${'pending'.padStart(10)} ${'bytes/request'.padStart(14)} ${'sends/s'.padStart(10)} ${'expiries/s'.padStart(12)}`,
);
const figures: Record<string, Scale[]> = { memory: [], redis: [] };
for (const pending of sized([10_000, 100_000, 1_000_000], [250, 500, 1_000])) {
  const scale = await measure(pending, memoryStorage(), async () => settledHeap(), 1);
  figures.memory!.push(scale);
  console.log(line('memory', scale));
}

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const client = createClient({ url: redisUrl, disableOfflineQueue: true });
client.on('error', () => undefined);
const reachable = await client.connect().then(
  () => true,
  (error: unknown) => {
    console.log(`Redis runs skipped: ${String(error)}`);
    return false;
  },
);
if (reachable) {
  const usedMemory = async (): Promise<number> =>
    Number(/used_memory:(\d+)/.exec(String(await client.sendCommand(['INFO', 'memory'])))?.[1] ?? Number.NaN);
  for (const pending of sized([10_000, 50_000, 100_000], [250, 500, 1_000])) {
    const keyPrefix = `chat-notify-bench-scale:${Date.now()}:`;
    const scale = await measure(pending, redisStorage({ client, keyPrefix }), usedMemory, 20);
    figures.redis!.push(scale);
    console.log(line('redis', scale));
    for await (const keys of client.scanIterator({ MATCH: `${keyPrefix}*`, COUNT: 1000 })) {
      if (keys.length > 0) await client.unlink(keys);
    }
  }
  client.destroy();
}
console.log(
  '\nbytes/request: what the pending requests added (memory: heap after a full collection; Redis:\n' +
    'used_memory), each with its timeout, 3 inbox copies and their delivery records. expiries/s:\n' +
    'all fall due at once; runDueWork stores every timeout and updates every copy.',
);
saveFigures(figures);
// Timers of the notifiers' idle request queues would hold the process for 30 s: the figures are in.
process.exit(0);

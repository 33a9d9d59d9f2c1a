/**
 * Scale of pending work: interactive requests to 3 recipients sent through the notifier (inbox
 * copies included) and left pending, at three sizes per store. Prints the bytes each pending
 * request costs (heap after a full collection on memory; Redis `used_memory`) and how fast they
 * expire when up to 100,000 of them fall due at once while the rest stay pending (`runDueWork` in
 * virtual time: the timeouts, the stored transitions and the updates of every copy).
 * `--memory-only` leaves Redis out; `--largest-only` measures only the largest size of each store.
 * Unless `--memory-only`, it also measures the bytes of requests whose copies go to Slack, on memory
 * and on Redis (a fake Web API in a process of its own stands in for Slack's servers), and on Redis
 * to Teams (a fake Bot Connector in process, whose messages do not count in Redis's memory): the
 * state kept for a production transport, whose messages live on the platform, not in the storage as
 * the inbox's do. Redis keys carry a prefix as long as the default.
 */

import { setTimeout } from 'node:timers/promises';
import { memoryStorage } from '../adapters/storage/memory/index.js';
import { redisStorage } from '../adapters/storage/redis/index.js';
import type { StoragePorts } from '../core/ports/storage.js';
import { interactiveBody, post } from '../test/support/api-requests.js';
import { benchNotifier, benchSlackNotifier, benchTeamsNotifier } from './bench-notifier.js';
import { saveFigures, settledHeap, sized } from './options.js';
import { benchKeyPrefix, benchRedis } from './redis-connection.js';

/** How long the collector's background work after measuring the heap is given before the expiries. */
const settleMs = sized(3_000, 0);
type RedisClient = NonNullable<Awaited<ReturnType<typeof benchRedis>>>;

/** Redis's `used_memory`. */
const usedMemory = async (client: RedisClient): Promise<number> =>
  Number(/used_memory:(\d+)/.exec(String(await client.sendCommand(['INFO', 'memory'])))?.[1] ?? Number.NaN);

/** The most requests that fall due at once, whatever the number pending. */
const mostDue = 100_000;
const bodyTimingOutAfter = (minutes: number): string =>
  interactiveBody(
    ['bob@acme.test', 'carol@acme.test', 'dave@acme.test'],
    minutes,
    'Approve the deploy of *v2.3*?',
  );
const dueSoon = bodyTimingOutAfter(30);
const dueLater = bodyTimingOutAfter(120);

/** Figures of one size on one store. */
interface Scale {
  pending: number;
  /** How many of the pending requests fell due at once. */
  due: number;
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
  const notifier = await benchNotifier(storage, { clock });
  const due = Math.min(pending, mostDue);
  // Exactly `due` of the sends, spread evenly among the others.
  const isDue = (index: number): boolean =>
    Math.floor(((index + 1) * due) / pending) > Math.floor((index * due) / pending);
  const before = await bytesInUse();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < pending) {
        const index = next;
        next += 1;
        const answer = await post(notifier, isDue(index) ? dueSoon : dueLater);
        if (answer?.status !== 200) throw new Error(`send answered ${answer?.status}: ${answer?.body}`);
      }
    }),
  );
  const sendSeconds = (performance.now() - started) / 1000;
  const after = await bytesInUse();
  // The heap was just measured after forced full collections (memory): the collector sweeps what
  // they freed in the background for a while, on the same two cores as the expiries. Timing the
  // expiries only once that is done made runs of one setting agree within about 3%, where they
  // varied by a third; a service does not collect in full right before its timeouts fall due.
  await setTimeout(settleMs);
  now += 31 * 60_000;
  const expiring = performance.now();
  let expired = 0;
  for (let ran = await notifier.runDueWork(); ran > 0; ran = await notifier.runDueWork()) expired += ran;
  const expirySeconds = (performance.now() - expiring) / 1000;
  await notifier.stop();
  if (expired !== due) throw new Error(`${expired} requests expired, not the ${due} due`);
  return {
    pending,
    due,
    bytesPerRequest: (after - before) / pending,
    sendsPerSecond: pending / sendSeconds,
    expiriesPerSecond: due / expirySeconds,
  };
}

/** Deletes what a measurement left under its prefix. */
async function forgetKeys(client: RedisClient, keyPrefix: string): Promise<void> {
  for await (const found of client.scanIterator({ MATCH: `${keyPrefix}*`, COUNT: 1000 })) {
    if (found.length > 0) await client.unlink(found);
  }
}

/** Bytes of one size with the copies on Slack, and how fast they were sent. */
type SlackScale = Pick<Scale, 'pending' | 'bytesPerRequest' | 'sendsPerSecond'>;

async function measureOnSlack(
  pending: number,
  storage: StoragePorts,
  bytesInUse: () => Promise<number>,
): Promise<SlackScale> {
  const { notifier, slack } = await benchSlackNotifier(
    ['bob@acme.test', 'carol@acme.test', 'dave@acme.test'],
    storage,
  );
  // The users' ids and channels cached, as in a running service.
  await post(notifier, dueLater);
  const before = await bytesInUse();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (next < pending) {
        next += 1;
        const answer = await post(notifier, dueLater);
        if (answer?.status !== 200) throw new Error(`send answered ${answer?.status}: ${answer?.body}`);
      }
    }),
  );
  const sendSeconds = (performance.now() - started) / 1000;
  const after = await bytesInUse();
  await notifier.stop();
  await slack.close();
  return { pending, bytesPerRequest: (after - before) / pending, sendsPerSecond: pending / sendSeconds };
}

/** Bytes and keys of one size on Redis with the copies on Teams, and how fast they were sent. */
type TeamsScale = SlackScale & { keysPerRequest: number };

/**
 * Requests to 3 Teams users each, every user in only one of them: Teams paces each conversation
 * (docs/teams.md), so a user's second message would wait its turn. All are of one tenant, whose
 * calls the transport paces at 30 a second: the sends take about `pending` / 10 seconds.
 */
async function measureTeamsOnRedis(client: RedisClient, pending: number): Promise<TeamsScale> {
  const keyPrefix = benchKeyPrefix();
  const { notifier, emails, close } = await benchTeamsNotifier(
    redisStorage({ client, keyPrefix }),
    pending * 3,
  );
  const keys = async () => {
    let count = 0;
    for await (const found of client.scanIterator({ MATCH: `${keyPrefix}*`, COUNT: 1000 }))
      count += found.length;
    return count;
  };
  const [keysBefore, before] = [await keys(), await usedMemory(client)];
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (next < pending) {
        const index = next;
        next += 1;
        const body = interactiveBody(
          emails.slice(3 * index, 3 * index + 3),
          120,
          'Approve the deploy of *v2.3*?',
        );
        const answer = await post(notifier, body);
        if (answer?.status !== 200) throw new Error(`send answered ${answer?.status}: ${answer?.body}`);
      }
    }),
  );
  const sendSeconds = (performance.now() - started) / 1000;
  const [keysAfter, after] = [await keys(), await usedMemory(client)];
  await close();
  await forgetKeys(client, keyPrefix);
  return {
    pending,
    bytesPerRequest: (after - before) / pending,
    keysPerRequest: (keysAfter - keysBefore) / pending,
    sendsPerSecond: pending / sendSeconds,
  };
}

const line = (store: string, scale: Scale): string =>
  `${store.padEnd(7)} ${scale.pending.toLocaleString('en').padStart(10)} ${scale.due.toLocaleString('en').padStart(8)} ${scale.bytesPerRequest.toFixed(0).padStart(14)} ${scale.sendsPerSecond.toFixed(0).padStart(10)} ${scale.expiriesPerSecond.toFixed(0).padStart(12)}`;

/** A row of the table without expiries, and where the copies' state was kept. */
const rowWithoutExpiries = (name: string, scale: SlackScale, note: string): string =>
  `${name.padEnd(7)} ${scale.pending.toLocaleString('en').padStart(10)} ${'-'.padStart(8)} ${scale.bytesPerRequest.toFixed(0).padStart(14)} ${scale.sendsPerSecond.toFixed(0).padStart(10)} ${'-'.padStart(12)}  (${note})`;

console.log(
  `${'store'.padEnd(7)} ${'pending'.padStart(10)} ${'due'.padStart(8)} ${'bytes/request'.padStart(14)} ${'sends/s'.padStart(10)} ${'expiries/s'.padStart(12)}`,
);
const figures: {
  memory: Scale[];
  redis: Scale[];
  slack?: SlackScale;
  slackOnRedis?: SlackScale;
  teams?: TeamsScale;
} = { memory: [], redis: [] };

/** `--memory-only`: the run of `npm run bench` that measures memory under other Node options. */
const memoryOnly = process.argv.includes('--memory-only');
/** `--largest-only`: the run that measures only the size the aims are set for. */
const largestOnly = process.argv.includes('--largest-only');
const measuredSizes = (sizes: number[]): number[] => (largestOnly ? sizes.slice(-1) : sizes);
const client = memoryOnly ? null : await benchRedis();
if (client) {
  for (const pending of measuredSizes(sized([10_000, 50_000, 100_000], [250, 500, 1_000]))) {
    const keyPrefix = benchKeyPrefix();
    const scale = await measure(pending, redisStorage({ client, keyPrefix }), () => usedMemory(client), 20);
    figures.redis.push(scale);
    console.log(line('redis', scale));
    await forgetKeys(client, keyPrefix);
  }
  const slackPrefix = benchKeyPrefix();
  const slackOnRedis = await measureOnSlack(
    sized(100_000, 250),
    redisStorage({ client, keyPrefix: slackPrefix }),
    () => usedMemory(client),
  );
  await forgetKeys(client, slackPrefix);
  figures.slackOnRedis = slackOnRedis;
  console.log(rowWithoutExpiries('slack', slackOnRedis, 'Redis'));
  const teams = await measureTeamsOnRedis(client, sized(500, 20));
  figures.teams = teams;
  console.log(
    rowWithoutExpiries('teams', teams, `Redis, ${teams.keysPerRequest.toFixed(2)} keys per request`),
  );
  client.destroy();
}

if (!memoryOnly) {
  const scale = await measureOnSlack(sized(100_000, 250), memoryStorage(), async () => settledHeap());
  figures.slack = scale;
  console.log(rowWithoutExpiries('slack', scale, 'memory'));
}

// Memory last: its largest run leaves a heap of gigabytes behind, which would slow whatever came next.
for (const pending of measuredSizes(sized([10_000, 100_000, 1_000_000], [250, 500, 1_000]))) {
  const scale = await measure(pending, memoryStorage(), async () => settledHeap(), 1);
  figures.memory.push(scale);
  console.log(line('memory', scale));
}
console.log(
  '\nbytes/request: what the pending requests added (memory: heap after a full collection; Redis:\n' +
    'used_memory, keys prefixed as long as the default), each with its timeout, 3 inbox copies and\n' +
    'their delivery records ("slack": its 3 copies posted to a fake Slack Web API instead of the\n' +
    'inbox; "teams": on Redis, its 3 copies posted to a fake Bot Connector, each to a user of its\n' +
    'own, one tenant: its sends/s are of requests, 3 calls each, paced at 30 calls a second per\n' +
    'tenant as Teams allows). expiries/s:\n' +
    `the "due" requests (all, or ${mostDue.toLocaleString('en')} spread among the pending ones) fall due at once;\n` +
    'runDueWork stores every timeout and updates every copy while the rest stay pending. The expiries\n' +
    `start ${settleMs / 1000} s after the heap was measured: time for the collector to sweep in the background what\n` +
    'the collections of that measurement freed.',
);
saveFigures(figures);

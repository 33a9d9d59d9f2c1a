/**
 * Counts what a send and a status read cost on Redis: round trips on the critical path, socket
 * writes, commands the client sends and commands the server runs (scripts included), against a PING
 * measured in the same run. Prints, never asserts; the method is printed with the figures.
 * Run with `npx tsx bench/redis-round-trips.ts` (REDIS_URL, default redis://127.0.0.1:6379).
 */

import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { httpCallbacks } from '../adapters/callbacks/index.js';
import { redisStorage } from '../adapters/storage/redis/index.js';
import * as admissionLua from '../adapters/storage/redis/lua/admission-lua.js';
import * as deliveryLua from '../adapters/storage/redis/lua/delivery-lua.js';
import * as directoryLua from '../adapters/storage/redis/lua/directory-lua.js';
import * as dueWorkLua from '../adapters/storage/redis/lua/due-work-lua.js';
import * as idempotencyLua from '../adapters/storage/redis/lua/idempotency-lua.js';
import * as rateLimitLua from '../adapters/storage/redis/lua/rate-limit-lua.js';
import * as requestLua from '../adapters/storage/redis/lua/request-lua.js';
import * as transportStateLua from '../adapters/storage/redis/lua/transport-state-lua.js';
import type { LuaScript } from '../adapters/storage/redis/lua-script.js';
import type { RedisStorageClient } from '../adapters/storage/redis/redis-client.js';
import { digestApiKey } from '../core/security/api-key-format.js';
import { interactiveBody, plainBody, post, readStatus } from '../test/support/api-requests.js';
import { testKeys } from '../test/support/test-seed.js';
import { benchNotifier } from './bench-notifier.js';
import { saveFigures, sized } from './options.js';

type Client = ReturnType<typeof createClient>;
type SendArgs = Parameters<Client['sendCommand']>;

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const keyPrefix = `chat-notify-bench:${randomUUID()}:`;
const iterations = sized(20, 3);

const scriptNames = new Map<string, string>();
for (const module of [
  admissionLua,
  directoryLua,
  dueWorkLua,
  deliveryLua,
  idempotencyLua,
  rateLimitLua,
  requestLua,
  transportStateLua,
]) {
  for (const [name, value] of Object.entries(module)) {
    const script = value as LuaScript | string;
    if (typeof script === 'object') scriptNames.set(script.sha, name.replace(/Script$/, ''));
  }
}

/** One socket write of the adapter's client. */
interface Batch {
  depth: number;
  commands: string[];
  pending: number;
  doneAt: number | null;
}

/** What the wrapped client saw since the last reset. */
interface Trace {
  batches: Batch[];
  open: Batch | null;
  deepestDone: number;
  inFlight: number;
}

const trace: Trace = { batches: [], open: null, deepestDone: 0, inFlight: 0 };
const resetTrace = (): void => {
  trace.batches = [];
  trace.open = null;
  trace.deepestDone = 0;
};

const describeCommand = (args: SendArgs[0]): string => {
  const name = String(args[0]).toUpperCase();
  if (name === 'EVALSHA') return `script ${scriptNames.get(String(args[1])) ?? String(args[1]).slice(0, 8)}`;
  if (name === 'EVAL') return 'EVAL (script not cached yet)';
  return name;
};

/** The adapter's client, wrapped to group commands into socket writes and time their replies. */
function countingClient(client: Client): RedisStorageClient {
  return {
    sendCommand<T>(...args: SendArgs): Promise<T> {
      if (trace.open === null) {
        const batch: Batch = { depth: trace.deepestDone + 1, commands: [], pending: 0, doneAt: null };
        trace.open = batch;
        trace.batches.push(batch);
        // Queued before node-redis queues its flush, so it closes the batch just before the write.
        setImmediate(() => {
          trace.open = null;
        });
      }
      const batch = trace.open;
      batch.commands.push(describeCommand(args[0]));
      batch.pending += 1;
      trace.inFlight += 1;
      const settle = (): void => {
        trace.inFlight -= 1;
        batch.pending -= 1;
        if (batch.pending > 0) return;
        batch.doneAt = performance.now();
        trace.deepestDone = Math.max(trace.deepestDone, batch.depth);
      };
      const reply = client.sendCommand<T>(...args);
      reply.then(settle, settle);
      return reply;
    },
  };
}

const failFast = {
  disableOfflineQueue: true,
  socket: { reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2_000) },
};
const raw = createClient({ url: redisUrl, ...failFast });
const monitor = createClient({ url: redisUrl });
for (const client of [raw, monitor]) client.on('error', (error: unknown) => console.error(String(error)));
await Promise.all([raw.connect(), monitor.connect()]);

const info = String(await raw.sendCommand(['INFO', 'server']));
const version = /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
const address = /addr=(\S+)/.exec(String(await raw.sendCommand(['CLIENT', 'INFO'])))?.[1] ?? '';

/** MONITOR lines of the adapter's connection (and of its scripts) since the last reset. */
let serverCommands: string[] = [];
let attributing = false;
let markerSeen: ((marker: string) => void) | null = null;
await monitor.monitor((line: string) => {
  const source = /^\S+ \[\d+ ([^\]]+)\] "([^"]*)"(?: "([^"]*)")?/.exec(line);
  if (!source) return;
  const [, from, command = '', firstArg = ''] = source;
  if (from === 'lua') {
    if (attributing) serverCommands.push(`  lua ${command.toUpperCase()}`);
    return;
  }
  attributing = from === address;
  if (!attributing) return;
  if (command.toUpperCase() === 'ECHO' && firstArg.startsWith('bench-marker')) markerSeen?.(firstArg);
  else serverCommands.push(command.toUpperCase());
});

/** Waits until MONITOR has shown everything the adapter's connection sent so far. */
async function flushMonitor(): Promise<void> {
  const marker = `bench-marker-${randomUUID()}`;
  const seen = new Promise<void>((resolve) => {
    markerSeen = (m) => {
      if (m === marker) resolve();
    };
  });
  await raw.sendCommand(['ECHO', marker]);
  await seen;
}

const notifierStorage = redisStorage({ client: countingClient(raw), keyPrefix });
// Callbacks to a public address, resolved by a stand-in for DNS: the sends below only check it, and
// none of their requests finishes, so nothing is ever called back.
const notifier = await benchNotifier(notifierStorage, {
  callbacks: httpCallbacks({ resolver: { resolve: async () => ['93.184.216.34'] } }),
});

const twoRecipients = ['bob@acme.test', 'dave@acme.test'];
const plain = plainBody(twoRecipients);
const interactive = interactiveBody(twoRecipients);
const withCallback = interactiveBody(twoRecipients, 30, 'Approve?', 'https://hooks.example.com/done');
const send = async (body: string, headers: Record<string, string> = {}) => {
  const response = await post(notifier, body, headers);
  if (response?.status !== 200) throw new Error(`send answered ${response?.status}: ${response?.body}`);
  return response;
};
const created = JSON.parse((await send(interactive)).body) as { request_id: string };
const statusRead = async () => {
  const response = await readStatus(notifier, created.request_id);
  if (response?.status !== 200) throw new Error(`status answered ${response?.status}`);
};

/** Figures of one run of an operation. */
interface Sample {
  ms: number;
  roundTrips: number;
  writes: number;
  lateWrites: number;
  sent: number;
  server: number;
  batches: string[];
  serverCommands: string[];
}

async function sample(operation: () => Promise<unknown>, prepare: () => Promise<unknown>): Promise<Sample> {
  await prepare();
  // Whatever ran before (warm-ups, preparation) must have reached MONITOR before the count starts.
  await flushMonitor();
  resetTrace();
  serverCommands = [];
  const start = performance.now();
  await operation();
  const end = performance.now();
  // Fire-and-forget writes (lastUsedAt) still count as commands; wait for them before the marker.
  while (trace.inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 1));
  await flushMonitor();
  const done = trace.batches.filter((b) => b.doneAt !== null && b.doneAt <= end);
  return {
    ms: end - start,
    roundTrips: Math.max(0, ...done.map((b) => b.depth)),
    writes: trace.batches.length,
    lateWrites: trace.batches.length - done.length,
    sent: trace.batches.reduce((n, b) => n + b.commands.length, 0),
    server: serverCommands.length,
    batches: trace.batches.map(
      (b) =>
        `${b.depth}: ${b.commands.join(' ∥ ')}${b.doneAt !== null && b.doneAt > end ? '  (after the answer)' : ''}`,
    ),
    serverCommands: [...serverCommands],
  };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

const pings: number[] = [];
for (let i = 0; i < 200; i += 1) {
  const start = performance.now();
  await raw.ping();
  pings.push(performance.now() - start);
}
const pingMs = median(pings);

const method = `Method:
- round trips: the adapter's client is wrapped. node-redis writes every command issued in one tick
  in a single socket write (it flushes on setImmediate), so commands issued before the next
  setImmediate form one batch, one write. A batch's depth is 1 + the deepest batch that had
  completed when it was issued; an operation's round trips are the deepest batch completed before
  it answered: its latency counted in round trips. Writes still running when it answered
  (fire-and-forget) are counted apart.
- server commands: MONITOR on a second connection, keeping the lines of the adapter's connection
  and the "lua" lines that follow them (a script's commands run atomically right after its EVALSHA
  line), up to a marker ECHO sent after the operation; ${iterations} runs each after 3 warm-ups.
- baseline: the median PING round trip on the adapter's connection, in the same run.`;
console.log(`Redis ${version} at ${redisUrl}; key prefix ${keyPrefix}\n${method}\n`);
console.log(`baseline: one PING round trip, median of 200: ${(pingMs * 1000).toFixed(0)} µs\n`);

const nothing = async (): Promise<void> => {};
// The core writes lastUsedAt at most once a minute per key; forgetting it makes the next call write it.
const aliceKeyId = `key_${digestApiKey(testKeys.alice).slice(0, 24)}`;
const forgetLastUse = () => raw.sendCommand(['HDEL', `${keyPrefix}api-key-last-used`, aliceKeyId]);

const operations: Array<[string, () => Promise<unknown>, () => Promise<unknown>]> = [
  ['send, plain, 2 recipients', () => send(plain), nothing],
  [
    'send, plain, 2 recipients, Idempotency-Key',
    () => send(plain, { 'idempotency-key': randomUUID() }),
    nothing,
  ],
  ['send, interactive, 2 recipients', () => send(interactive), nothing],
  [
    'send, interactive, 2 recipients, Idempotency-Key',
    () => send(interactive, { 'idempotency-key': randomUUID() }),
    nothing,
  ],
  ['send, interactive, 2 recipients, callback_url', () => send(withCallback), nothing],
  [
    'send, interactive, 2 recipients, callback_url, Idempotency-Key',
    () => send(withCallback, { 'idempotency-key': randomUUID() }),
    nothing,
  ],
  ['status read', statusRead, nothing],
  ['status read, first of a minute (touches lastUsedAt)', statusRead, forgetLastUse],
];

/** The longest operation's name: the table's first column. */
const nameWidth = Math.max(...operations.map(([name]) => name.length));
console.log(
  `${'operation'.padEnd(nameWidth)} ${'round trips'.padStart(11)} ${'writes'.padStart(7)} ${'sent'.padStart(5)} ${'server cmds'.padStart(11)} ${'median'.padStart(9)} ${'x PING'.padStart(7)}`,
);
const details: string[] = [];
const figures: Record<string, { roundTrips: number; serverCommands: number; medianMicroseconds: number }> =
  {};
for (const [name, operation, prepare] of operations) {
  for (let i = 0; i < 3; i += 1) await operation();
  const samples: Sample[] = [];
  for (let i = 0; i < iterations; i += 1) samples.push(await sample(operation, prepare));
  const typical = samples[samples.length - 1]!;
  const ms = median(samples.map((s) => s.ms));
  figures[name] = {
    roundTrips: typical.roundTrips,
    serverCommands: typical.server,
    medianMicroseconds: ms * 1000,
  };
  const late = typical.lateWrites > 0 ? ` (+${typical.lateWrites} after the answer)` : '';
  console.log(
    `${name.padEnd(nameWidth)} ${String(typical.roundTrips).padStart(11)} ${String(typical.writes).padStart(7)} ${String(typical.sent).padStart(5)} ${String(typical.server).padStart(11)} ${`${(ms * 1000).toFixed(0)} µs`.padStart(9)} ${(ms / pingMs).toFixed(1).padStart(7)}${late}`,
  );
  const varying = new Set(samples.map((s) => `${s.roundTrips}/${s.writes}/${s.sent}/${s.server}`));
  if (varying.size > 1) details.push(`${name}: figures varied between runs: ${[...varying].join(', ')}`);
  details.push(`\n${name}, socket writes by round trip:\n  ${typical.batches.join('\n  ')}`);
  details.push(
    `  server commands (${typical.server}): ${typical.serverCommands.join(', ').replaceAll(',   lua', ' >')}`,
  );
}

console.log(details.join('\n'));
console.log(
  '\nNotes: "round trips" is the latency of the operation counted in sequential Redis round trips;\n' +
    '"writes" counts socket writes (a write carries every command issued in one tick); "sent" the\n' +
    'commands the client sent (EVALSHA counts one); "server cmds" what Redis executed, script\n' +
    'commands included. lastUsedAt is written at most once a minute per key, after authentication\n' +
    'and without being awaited; the last line shows a request that writes it.',
);

saveFigures({ pingMicroseconds: pingMs * 1000, operations: figures });
await notifier.stop();
for await (const keys of raw.scanIterator({ MATCH: `${keyPrefix}*`, COUNT: 1000 })) {
  if (keys.length > 0) await raw.unlink(keys);
}
raw.destroy();
monitor.destroy();

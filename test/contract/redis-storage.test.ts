import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { type AddressInfo, createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { createClient, RESP_TYPES, type RedisClientOptions } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { isConnectionError, redisStorage } from '../../adapters/storage/redis/index.js';
import { luaScript } from '../../adapters/storage/redis/lua-script.js';
import type { RedisStorageClient } from '../../adapters/storage/redis/redis-client.js';
import { createRedisRunner } from '../../adapters/storage/redis/redis-runner.js';
import type { DueItem } from '../../core/domain/due-work.js';
import { timeoutItemId } from '../../core/domain/due-work.js';
import type { InteractiveRequest } from '../../core/domain/interactive-request.js';
import { isNotifyError } from '../../core/errors.js';
import { createNotifier } from '../../core/notifier.js';
import type { StoragePorts } from '../../core/ports/storage.js';
import { describeStorageContract, describeTransportStateContract } from '../../testing/index.js';
import { testKeys, testSeed } from '../support/test-seed.js';
import { until } from '../support/until.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const t0 = Date.UTC(2030, 0, 1);

/**
 * The options a host should use: commands fail at once while disconnected (instead of waiting in the
 * offline queue), and the client reconnects by itself, quickly, when the server is back.
 */
const failFast = {
  disableOfflineQueue: true,
  socket: { connectTimeout: 1_000, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 500) },
} satisfies RedisClientOptions;

type Client = ReturnType<typeof createClient>;

/** A client whose connection errors are expected here (an unhandled `error` event would crash the run). */
const newClient = (url = redisUrl, options: RedisClientOptions = {}): Client => {
  const client = createClient({ url, ...failFast, ...options });
  client.on('error', () => undefined);
  return client;
};

const connected = async (url = redisUrl, options: RedisClientOptions = {}): Promise<Client> => {
  const client = newClient(url, options);
  await client.connect();
  return client;
};

/** Why Redis cannot be used, or null when it answers. */
async function probe(): Promise<string | null> {
  const client = createClient({ url: redisUrl, socket: { connectTimeout: 1_000, reconnectStrategy: false } });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    return null;
  } catch (error) {
    return `no Redis answers at ${redisUrl} (${String(error)})`;
  } finally {
    if (client.isOpen) client.destroy();
  }
}

const unavailableReason = await probe();
if (unavailableReason !== null) {
  // Under CI the Redis suites must run: a missing server fails the run instead of skipping silently.
  if (process.env.CI === 'true') throw new Error(`CI=true requires Redis: ${unavailableReason}`);
  console.warn(`Redis storage tests skipped: ${unavailableReason}`);
}
const available = unavailableReason === null;

/** A key prefix no other test run uses. */
const freshPrefix = (): string => `chat-notify-test:${randomUUID()}:`;

const globEscaped = (text: string): string => text.replace(/[*?[\]\\]/g, '\\$&');

/** Deletes every key under `prefix`: SCAN, never FLUSHDB, because other tests share the server. */
async function dropPrefix(client: Client, prefix: string): Promise<void> {
  for await (const keys of client.scanIterator({ MATCH: `${globEscaped(prefix)}*`, COUNT: 1000 })) {
    if (keys.length > 0) await client.unlink(keys);
  }
}

const shared: Client | null = available ? await connected() : null;
/** A client as a host might configure it differently: RESP3, and replies mapped to Buffers. */
const resp3: Client | null = available ? await connected(redisUrl, { RESP: 3 }) : null;
const clients: Client[] = [];

/** Another connection to the server, as another instance of the service would hold; closed after the file. */
const instanceClient = async (): Promise<Client> => {
  const client = await connected();
  clients.push(client);
  return client;
};

afterAll(async () => {
  for (const client of [...clients, shared, resp3]) if (client?.isOpen) client.destroy();
});

describe.skipIf(!available)('redis storage', () => {
  describeStorageContract('redis', async () => {
    const client = shared!;
    const prefix = freshPrefix();
    return {
      storage: redisStorage({ client, keyPrefix: prefix }),
      secondInstance: async () => redisStorage({ client: await instanceClient(), keyPrefix: prefix }),
      teardown: () => dropPrefix(client, prefix),
    };
  });

  describeStorageContract('redis (RESP3 client mapping strings to Buffers)', async () => {
    const prefix = freshPrefix();
    return {
      storage: redisStorage({
        client: resp3!.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer }),
        keyPrefix: prefix,
      }),
      teardown: () => dropPrefix(shared!, prefix),
    };
  });

  describeTransportStateContract('redis', async () => {
    const client = shared!;
    const prefix = freshPrefix();
    return {
      state: redisStorage({ client, keyPrefix: prefix }).transportState,
      secondInstance: async () =>
        redisStorage({ client: await instanceClient(), keyPrefix: prefix }).transportState,
      teardown: () => dropPrefix(client, prefix),
    };
  });

  describeTransportStateContract('redis (RESP3 client mapping strings to Buffers)', async () => {
    const prefix = freshPrefix();
    return {
      state: redisStorage({
        client: resp3!.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer }),
        keyPrefix: prefix,
      }).transportState,
      teardown: () => dropPrefix(shared!, prefix),
    };
  });
});

/** Rejects when `promise` has not settled within `ms`: a store call must fail fast, never hang. */
async function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Asserts that `call` rejects, within a second, with the 503 error of the library. */
async function expectUnavailable(call: Promise<unknown>): Promise<void> {
  const error = await within(1_000, call).then(
    () => new Error('resolved instead of rejecting'),
    (reason: unknown) => reason,
  );
  expect(isNotifyError(error, 'unavailable'), String(error)).toBe(true);
  if (isNotifyError(error)) expect(error.retryAfterSeconds).toBe(1);
}

/** One call of every kind of store method; each must reject as unavailable while Redis is unreachable. */
const everyPort = (storage: StoragePorts): Array<() => Promise<unknown>> => [
  () => storage.directory.getOrganization('org_1'),
  () => storage.directory.findPrincipalByDigest('0'.repeat(64)),
  () => storage.directory.findUsersByEmail('org_1', ['a@example.test']),
  () => storage.requests.getRequest('req_1'),
  () => storage.requests.updateRequest(request('req_1', 1), 0, { enqueue: [], cancel: [] }),
  () => storage.deliveries.listDeliveries('notif_1'),
  () =>
    storage.idempotency.acquire({ organizationId: 'o', key: 'k' }, 'f', 'notif_1', {
      now: t0,
      leaseMs: 1,
      ttlMs: 1,
    }),
  () => storage.rateLimits.take([{ key: 'k', capacity: 1, refillPerSecond: 1 }], 1),
  () =>
    storage.admission.admit({
      digest: '0'.repeat(64),
      failedAuth: { key: 'auth-failures:127.0.0.1', capacity: 1, refillPerSecond: 1 },
      perKey: { capacity: 1, refillPerSecond: 1 },
      perOrganization: { capacity: 1, refillPerSecond: 1 },
    }),
  () => storage.dueWork.claim(t0, 10, 1000),
  () => storage.dueWork.nextRunAt(),
  () => storage.transportState.get('k'),
  () => storage.transportState.getMany(['k', 'l']),
  () => storage.transportState.set('k', 'v'),
  () => storage.transportState.compareAndSet('k', 'v', null, { ttlMs: 1000 }),
  () => storage.transportState.delete('k'),
  () => storage.transportState.append('k', 'v'),
  () => storage.transportState.readList('k'),
  () => storage.failedCallbacks.list(),
];

const request = (id: string, version: number, message = 'Deploy?'): InteractiveRequest => ({
  id,
  organizationId: 'org_1',
  version,
  status: 'pending',
  message,
  options: [
    { text: 'Yes', value: 'yes' },
    { text: 'No', value: 'no' },
  ],
  mode: 'onUserAction',
  timeoutMinutes: 60,
  createdAt: t0,
  expiresAt: t0 + 3_600_000,
  finishedAt: null,
  externalReferenceId: null,
  sender: { userId: 'usr_1', name: 'Ada' },
  callback: null,
  recipients: [
    { email: 'bob@example.test', key: 'bob@example.test', value: null, respondedAt: null, expired: false },
  ],
});

const dueItem = (id: string, runAt: number): DueItem => ({
  id,
  kind: 'timeout',
  requestId: `req_${id}`,
  runAt,
  attempt: 0,
});

/**
 * A TCP proxy in front of Redis that the tests can take away and bring back on the same port, as a
 * network outage or a server restart would, or make swallow traffic so that a reply never comes.
 */
interface OutageProxy {
  /** `redis://` URL of the proxy, with the credentials and database of {@link redisUrl}. */
  url: string;
  /** Refuses new connections and cuts the open ones. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  /** Keeps connections open but drops what clients send, until the connections are cut. */
  blackhole(): void;
  close(): Promise<void>;
}

async function outageProxy(): Promise<OutageProxy> {
  const target = new URL(redisUrl);
  const sockets = new Set<Socket>();
  let swallow = false;
  let server: Server | null = null;
  let port = 0;

  const listen = async (): Promise<void> => {
    const next = createServer((downstream) => {
      const upstream = tcpConnect(Number(target.port || 6379), target.hostname);
      for (const socket of [downstream, upstream]) {
        sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => {
          sockets.delete(socket);
          downstream.destroy();
          upstream.destroy();
        });
      }
      downstream.on('data', (chunk) => {
        if (!swallow) upstream.write(chunk);
      });
      upstream.pipe(downstream);
    });
    next.listen(port, '127.0.0.1');
    await once(next, 'listening');
    port = (next.address() as AddressInfo).port;
    server = next;
  };

  const stop = async (): Promise<void> => {
    const current = server;
    server = null;
    for (const socket of sockets) socket.destroy();
    if (current) await new Promise((resolve) => current.close(resolve));
  };

  await listen();
  const url = new URL(redisUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    stop,
    async start() {
      swallow = false;
      await listen();
    },
    blackhole() {
      swallow = true;
    },
    close: stop,
  };
}

describe.skipIf(!available)('redis storage across instances', () => {
  const prefixes: string[] = [];
  const prefix = (): string => {
    const fresh = freshPrefix();
    prefixes.push(fresh);
    return fresh;
  };

  afterAll(async () => {
    if (shared) for (const used of prefixes) await dropPrefix(shared, used);
  });

  it('gives each of 1,000 due items to exactly one of 20 workers on 20 connections', async () => {
    const keyPrefix = prefix();
    const workers = await Promise.all(
      Array.from({ length: 20 }, async () => redisStorage({ client: await instanceClient(), keyPrefix })),
    );
    const items = Array.from({ length: 1000 }, (_, i) => dueItem(`due-${i}`, t0 + (i % 37)));
    await workers[0]!.dueWork.enqueue(items);
    const claims = new Map<string, number>();
    await Promise.all(
      workers.map(async ({ dueWork }) => {
        for (;;) {
          const batch = await dueWork.claim(t0 + 100, 7, 60_000);
          if (batch.length === 0) return;
          for (const item of batch) {
            claims.set(item.id, (claims.get(item.id) ?? 0) + 1);
            await dueWork.complete(item);
          }
        }
      }),
    );
    expect(claims.size).toBe(1000);
    expect([...claims.values()].every((count) => count === 1)).toBe(true);
    expect(await workers[19]!.dueWork.nextRunAt()).toBeNull();
  });

  it('lets exactly one of 50 writers on 5 connections win each version', async () => {
    const keyPrefix = prefix();
    const instances = await Promise.all(
      Array.from({ length: 5 }, async () => redisStorage({ client: await instanceClient(), keyPrefix })),
    );
    const id = `req_${randomUUID().replaceAll('-', '')}`;
    await instances[0]!.requests.createRequest(request(id, 0), {
      enqueue: [dueItem(timeoutItemId(id), t0)],
      cancel: [],
    });
    let winner = -1;
    for (let version = 0; version < 4; version += 1) {
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          instances[i % 5]!.requests.updateRequest(request(id, version + 1, `writer ${i}`), version, {
            enqueue: [dueItem(`v${version + 1}-writer-${i}`, t0)],
            cancel: [timeoutItemId(id), ...Array.from({ length: 50 }, (_, j) => `v${version}-writer-${j}`)],
          }),
        ),
      );
      const winners = results.flatMap((won, i) => (won ? [i] : []));
      expect(winners).toHaveLength(1);
      winner = winners[0]!;
    }
    expect(await instances[3]!.requests.getRequest(id)).toEqual(request(id, 4, `writer ${winner}`));
    const due = await instances[4]!.dueWork.claim(t0 + 1000, 100, 1000);
    expect(due.map((item) => item.id)).toEqual([`v4-writer-${winner}`]);
  });

  it('holds a rate limit across two instances', async () => {
    const keyPrefix = prefix();
    const a = redisStorage({ client: await instanceClient(), keyPrefix });
    const b = redisStorage({ client: await instanceClient(), keyPrefix });
    const bucket = { key: 'key:shared', capacity: 5, refillPerSecond: 0.001 };
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).rateLimits.take([bucket], 1)),
    );
    expect(results.filter((refused) => refused === null)).toHaveLength(5);
    expect(await a.rateLimits.take([bucket], 1)).toBe(0);
    expect(await b.rateLimits.take([bucket], 1)).toBe(0);
  });

  it('admits no more requests across two instances than the key bucket holds, charging the organization alike', async () => {
    const keyPrefix = prefix();
    const a = redisStorage({ client: await instanceClient(), keyPrefix });
    const b = redisStorage({ client: await instanceClient(), keyPrefix });
    await a.directory.saveOrganization({ id: 'org_1', name: 'Acme' });
    await a.directory.saveUser({
      id: 'usr_1',
      organizationId: 'org_1',
      email: 'ada@example.test',
      name: 'Ada',
      role: 'admin',
      chatLinks: [],
    });
    const digest = 'b'.repeat(64);
    await a.directory.saveApiKey({
      id: 'key_1',
      organizationId: 'org_1',
      userId: 'usr_1',
      label: 'ci',
      prefix: 'cnk_abcdefgh',
      digest,
      createdAt: t0,
      lastUsedAt: null,
      revokedAt: null,
    });
    const slow = (capacity: number) => ({ capacity, refillPerSecond: 0.001 });
    const admission = {
      digest,
      failedAuth: { key: 'auth-failures:10.0.0.1', ...slow(1) },
      perKey: slow(5),
      perOrganization: slow(8),
    };
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).admission.admit(admission)),
    );
    expect(outcomes.filter((o) => o.outcome === 'admitted')).toHaveLength(5);
    expect(outcomes.filter((o) => o.outcome === 'limited' && o.by === 'key')).toHaveLength(15);
    const organization = { key: 'org:org_1', ...slow(8) };
    expect(await b.rateLimits.take([organization], 4)).toBe(0);
    expect(await b.rateLimits.take([organization], 3)).toBeNull();
  });

  it('hands an item to another instance once the lease of a dead one has ended', async () => {
    const keyPrefix = prefix();
    const doomedClient = await instanceClient();
    const doomed = redisStorage({ client: doomedClient, keyPrefix });
    const survivor = redisStorage({ client: await instanceClient(), keyPrefix });
    await doomed.dueWork.enqueue([dueItem('lonely', t0)]);
    const [lost] = await doomed.dueWork.claim(t0, 10, 1000);
    doomedClient.destroy();
    expect(await survivor.dueWork.nextRunAt()).toBe(t0 + 1000);
    expect(await survivor.dueWork.claim(t0 + 999, 10, 1000)).toEqual([]);
    const [taken] = await survivor.dueWork.claim(t0 + 1000, 10, 1000);
    expect(taken).toMatchObject({ id: 'lonely', attempt: 0, runAt: t0 });
    expect(taken?.leaseToken).not.toBe(lost?.leaseToken);
    await survivor.dueWork.complete(lost!);
    expect(await survivor.dueWork.nextRunAt()).toBe(t0 + 2000);
    await survivor.dueWork.complete(taken!);
    expect(await survivor.dueWork.nextRunAt()).toBeNull();
  });
});

describe.skipIf(!available)('redis storage beyond the contract', () => {
  const withStorage = async (body: (storage: StoragePorts, keyPrefix: string) => Promise<void>) => {
    const keyPrefix = freshPrefix();
    try {
      await body(redisStorage({ client: shared!, keyPrefix }), keyPrefix);
    } finally {
      await dropPrefix(shared!, keyPrefix);
    }
  };

  it('claims items due at the same time in the order they were scheduled, as the memory adapter does', () =>
    withStorage(async ({ dueWork }) => {
      const ids = ['m', 'z', 'a', 'q', 'b'];
      for (const id of ids) await dueWork.enqueue([dueItem(id, t0)]);
      await dueWork.enqueue([dueItem('m', t0)]);
      const claimed = await dueWork.claim(t0, 10, 1000);
      expect(claimed.map((item) => item.id)).toEqual(['z', 'a', 'q', 'b', 'm']);
    }));

  it("keeps a request's unclaimed timeout as its member alone, no record, and gives it a hash when claimed", () =>
    withStorage(async ({ dueWork }, keyPrefix) => {
      // Due first: among items due at the same time, a compact one comes out in the order of its id.
      const timeout: DueItem = {
        id: 'timeout:req_c',
        kind: 'timeout',
        requestId: 'req_c',
        runAt: t0 - 1,
        attempt: 0,
      };
      const callback: DueItem = {
        id: 'callback:req_c',
        kind: 'callback',
        requestId: 'req_c',
        runAt: t0,
        attempt: 1,
      };
      await dueWork.enqueue([timeout, callback, dueItem('odd', t0)]);
      const key = (id: string) => `${keyPrefix}due-item:${id}`;
      expect(await shared!.exists(key(timeout.id))).toBe(0);
      expect(await shared!.zScore(`${keyPrefix}due`, timeout.id)).toBe(t0 - 1);
      expect(await shared!.type(key(callback.id))).toBe('hash');
      expect(await shared!.type(key('odd'))).toBe('hash');
      const claimed = await dueWork.claim(t0, 10, 1000);
      expect(claimed.map(({ leaseToken: _, ...item }) => item)).toEqual([
        timeout,
        callback,
        dueItem('odd', t0),
      ]);
      expect(await shared!.hGetAll(key(timeout.id))).toEqual({
        kind: 'timeout',
        requestId: 'req_c',
        runAt: String(t0 - 1),
        attempt: '0',
        member: claimed[0]!.leaseToken,
        lease: claimed[0]!.leaseToken,
      });
      expect(await shared!.zCard(`${keyPrefix}due`)).toBe(3);
      await dueWork.reschedule(claimed[0]!, t0 + 5);
      expect(await dueWork.claim(t0 + 5, 10, 1000)).toMatchObject([
        { ...timeout, runAt: t0 + 5, attempt: 1 },
      ]);
    }));

  it.each([
    ['has a colon', 'a:b', 'a:b:c'],
    ['looks like the sequence of a member', '0000000000000001', '0000000000000001:c'],
  ])('keeps an item whose kind %s as a hash, so that its id cannot be read wrongly', (_, kind, id) =>
    withStorage(async ({ dueWork }, keyPrefix) => {
      // Not a kind of the core's, but the port's type is all a caller from JavaScript is held to.
      const item = { id, kind: kind as DueItem['kind'], requestId: 'c', runAt: t0, attempt: 0 };
      await dueWork.enqueue([item]);
      expect(await shared!.type(`${keyPrefix}due-item:${id}`)).toBe('hash');
      const [claimed] = await dueWork.claim(t0, 10, 1000);
      expect(claimed).toMatchObject(item);
    }),
  );

  it('claims compact items due at the same time as others after them, in the order of their ids', () =>
    withStorage(async ({ dueWork }) => {
      const timeout = (requestId: string): DueItem => ({
        id: `timeout:${requestId}`,
        kind: 'timeout',
        requestId,
        runAt: t0,
        attempt: 0,
      });
      await dueWork.enqueue([timeout('req_b'), dueItem('z', t0), timeout('req_a'), dueItem('m', t0)]);
      const claimed = await dueWork.claim(t0, 10, 1000);
      expect(claimed.map((item) => item.id)).toEqual(['z', 'm', 'timeout:req_a', 'timeout:req_b']);
    }));

  /** The storage over the shared client, and the commands it sent (their names). */
  const counted = (keyPrefix: string) => {
    const sent: string[] = [];
    const client: RedisStorageClient = {
      sendCommand: (args, options) => {
        sent.push(String(args[0]));
        return shared!.sendCommand(args, options);
      },
    };
    return { storage: redisStorage({ client, keyPrefix }), sent };
  };

  it('completes the items completed in one turn with one script, each only under its own lease', () =>
    withStorage(async ({ dueWork }, keyPrefix) => {
      await dueWork.enqueue(['a', 'b', 'c'].map((id) => dueItem(id, t0)));
      const claimed = await dueWork.claim(t0, 10, 1000);
      const { storage, sent } = counted(keyPrefix);
      const [a, b, c] = claimed;
      await Promise.all([
        storage.dueWork.complete(a!),
        storage.dueWork.complete({ ...b!, leaseToken: 'not-its-lease' }),
        storage.dueWork.complete(c!),
      ]);
      expect(sent).toEqual(['EVALSHA']);
      // The item completed with a token it never gave is still there, and runs once its lease ends.
      expect((await dueWork.claim(t0 + 1000, 10, 1000)).map((item) => item.id)).toEqual(['b']);
    }));

  it('reads an organization once for reads of it under way together, and afresh after a save', () =>
    withStorage(async ({ directory }, keyPrefix) => {
      await directory.saveOrganization({ id: 'acme', name: 'Acme' });
      const { storage, sent } = counted(keyPrefix);
      const reads = await Promise.all([1, 2, 3].map(() => storage.directory.getOrganization('acme')));
      expect(reads).toEqual([1, 2, 3].map(() => ({ id: 'acme', name: 'Acme' })));
      expect(sent).toEqual(['HGET']);
      const before = storage.directory.getOrganization('acme');
      await storage.directory.saveOrganization({ id: 'acme', name: 'Acme Corp' });
      expect(await before).toEqual({ id: 'acme', name: 'Acme' });
      expect(await storage.directory.getOrganization('acme')).toEqual({ id: 'acme', name: 'Acme Corp' });
    }));

  it('leaves a compact timeout alone on a complete or reschedule with a token it never gave', () =>
    withStorage(async ({ dueWork }) => {
      const timeout = { ...dueItem('timeout:req_d', t0), requestId: 'req_d' };
      await dueWork.enqueue([timeout]);
      const forged = { ...timeout, leaseToken: 'x' };
      await dueWork.complete(forged);
      await dueWork.reschedule(forged, t0 + 100);
      expect(await dueWork.nextRunAt()).toBe(t0);
      expect((await dueWork.claim(t0, 10, 1000)).map((item) => item.id)).toEqual(['timeout:req_d']);
    }));

  it.each([
    ['as a string, its member, by the release before', 'string'],
    ['as a hash by earlier releases', 'hash'],
  ] as const)("claims and cancels a request's timeout kept %s", (_, form) =>
    withStorage(async ({ dueWork, requests }, keyPrefix) => {
      const member = (id: string) => `${'0'.repeat(15)}1:${id}`;
      const itemKey = (id: string) => `${keyPrefix}due-item:${id}`;
      // New members (lease tokens) must differ from the old ones, as they would in a live store.
      await shared!.set(`${keyPrefix}sequence`, '100');
      for (const id of ['timeout:req_old', 'timeout:req_gone']) {
        if (form === 'string') await shared!.set(itemKey(id), member(id));
        else {
          await shared!.hSet(itemKey(id), {
            kind: 'timeout',
            requestId: id.slice('timeout:'.length),
            runAt: String(t0),
            attempt: '0',
            member: member(id),
          });
        }
        await shared!.zAdd(`${keyPrefix}due`, { score: t0, value: member(id) });
      }
      await requests.createRequest(request('req_gone', 0), { enqueue: [], cancel: [] });
      await requests.updateRequest(request('req_gone', 1), 0, { enqueue: [], cancel: ['timeout:req_gone'] });
      expect(await shared!.exists(itemKey('timeout:req_gone'))).toBe(0);
      expect(await shared!.zRange(`${keyPrefix}due`, 0, -1)).toEqual([member('timeout:req_old')]);
      const claimed = await dueWork.claim(t0, 10, 1000);
      expect(claimed.map(({ leaseToken: _, ...item }) => item)).toEqual([
        { id: 'timeout:req_old', kind: 'timeout', requestId: 'req_old', runAt: t0, attempt: 0 },
      ]);
      expect(await shared!.type(itemKey('timeout:req_old'))).toBe('hash');
      expect(await dueWork.nextRunAt()).toBe(t0 + 1000);
      expect(claimed[0]!.leaseToken).not.toBe(member('timeout:req_old'));
      expect(await shared!.zRange(`${keyPrefix}due`, 0, -1)).toEqual([claimed[0]!.leaseToken]);
      await dueWork.complete(claimed[0]!);
      expect(await dueWork.nextRunAt()).toBeNull();
      expect(await shared!.exists(itemKey('timeout:req_old'))).toBe(0);
    }),
  );

  it('leases once a timeout that an instance of this release and one of the release before both scheduled', () =>
    withStorage(async ({ dueWork }, keyPrefix) => {
      const id = 'timeout:req_both';
      const old = `${'0'.repeat(15)}1:${id}`;
      await shared!.set(`${keyPrefix}sequence`, '100');
      await shared!.set(`${keyPrefix}due-item:${id}`, old);
      await shared!.zAdd(`${keyPrefix}due`, [
        { score: t0, value: old },
        { score: t0, value: id },
      ]);
      const claimed = await dueWork.claim(t0, 10, 1000);
      expect(claimed.map((item) => item.id)).toEqual([id]);
      expect(await shared!.zRange(`${keyPrefix}due`, 0, -1)).toEqual([claimed[0]!.leaseToken]);
    }));

  it('lists users in the order of their first save, as the memory adapter does', () =>
    withStorage(async ({ directory }) => {
      const saved = [];
      for (const name of ['zed', 'amy', 'kim']) {
        saved.push(
          await directory.saveUser({
            id: `usr_${name}`,
            organizationId: name === 'kim' ? 'org_2' : 'org_1',
            email: `${name}@example.test`,
            name,
            role: 'member',
            chatLinks: [],
          }),
        );
      }
      await directory.saveUser({ ...saved[0]!, name: 'Zed again' });
      expect((await directory.listUsers()).map((user) => user.id)).toEqual(['usr_zed', 'usr_amy', 'usr_kim']);
      expect((await directory.listUsers('org_1')).map((user) => user.id)).toEqual(['usr_zed', 'usr_amy']);
    }));

  it('lets Redis expire an idempotency record after its ttl, counted from its creation', () =>
    withStorage(async ({ idempotency }, keyPrefix) => {
      const scope = { organizationId: 'org_1', key: 'k' };
      const timing = { now: t0, leaseMs: 10, ttlMs: 60_000 };
      await idempotency.acquire(scope, 'fp', 'notif_1', timing);
      const key = `${keyPrefix}idempotency:${JSON.stringify(['org_1', 'k'])}`;
      const first = await shared!.pTTL(key);
      expect(first).toBeGreaterThan(59_000);
      expect(first).toBeLessThanOrEqual(60_000);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await idempotency.acquire(scope, 'fp', 'notif_2', { ...timing, now: t0 + 100 })).toEqual({
        outcome: 'acquired',
        sendId: 'notif_1',
      });
      expect(await shared!.pTTL(key)).toBeLessThan(first);
    }));

  it('keeps a bucket only until it would be full again', () =>
    withStorage(async ({ rateLimits }, keyPrefix) => {
      const bucket = { key: 'key:k', capacity: 10, refillPerSecond: 2 };
      const key = `${keyPrefix}rate-limit:key:k`;
      expect(await rateLimits.take([bucket], 0)).toBeNull();
      expect(await shared!.exists(key)).toBe(0);
      expect(await rateLimits.take([bucket], 3)).toBeNull();
      const ttl = await shared!.pTTL(key);
      expect(ttl).toBeGreaterThan(1_400);
      expect(ttl).toBeLessThanOrEqual(1_500);
    }));

  it('keeps each copy of a send without a request as its place, ref and time, compactly and without an order list', () =>
    withStorage(async ({ deliveries }, keyPrefix) => {
      const copy = (recipient: string, messageId: string) => ({
        sendId: 'req_1',
        recipient,
        platform: 'inbox',
        ref: { messageId },
        deliveredAt: t0,
      });
      const bob = copy('bób@example.test', 'msg_AAAAAAAAAAAAAAAAAAAAAAAA');
      const carol = copy('carol@example.test', 'msg_BBBBBBBBBBBBBBBBBBBBBBBB');
      const bobAgain = { ...bob, ref: { messageId: 'msg_CCCCCCCCCCCCCCCCCCCCCCCC' }, deliveredAt: t0 + 1 };
      await deliveries.addDelivery(bob);
      await deliveries.addDelivery(carol);
      await deliveries.addDelivery(bobAgain);
      const hash = `${keyPrefix}deliveries:req_1`;
      expect(await shared!.hGetAll(hash)).toEqual({
        [JSON.stringify(['bób@example.test', 'inbox'])]: JSON.stringify([1, bobAgain.ref, t0 + 1]),
        [JSON.stringify(['carol@example.test', 'inbox'])]: JSON.stringify([2, carol.ref, t0]),
      });
      expect(await shared!.sendCommand(['OBJECT', 'ENCODING', hash])).toBe('listpack');
      expect(await shared!.exists(`${keyPrefix}delivery-order:req_1`)).toBe(0);
      expect(await deliveries.listDeliveries('req_1')).toEqual([bobAgain, carol]);
    }));

  it('lists the copies of a send in recording order when Redis keeps their hash unordered', () =>
    withStorage(async ({ deliveries }, keyPrefix) => {
      // Refs longer than a listpack takes: the hash becomes a hash table, which keeps no order.
      const recorded = Array.from({ length: 40 }, (_, index) => ({
        sendId: 'req_3',
        recipient: `user${String(index).padStart(2, '0')}@example.test`,
        platform: 'teams',
        ref: { conversationId: `a:${'x'.repeat(80)}`, activityId: String(index) },
        deliveredAt: t0 + index,
      }));
      for (const record of recorded) await deliveries.addDelivery(record);
      expect(await shared!.sendCommand(['OBJECT', 'ENCODING', `${keyPrefix}deliveries:req_3`])).toBe(
        'hashtable',
      );
      expect(await deliveries.listDeliveries('req_3')).toEqual(recorded);
    }));

  it('reads the whole records and order list of an earlier release, and keeps that order as copies are added', () =>
    withStorage(async ({ deliveries }, keyPrefix) => {
      const copy = (recipient: string, ts: string) => ({
        sendId: 'req_2',
        recipient,
        platform: 'slack',
        ref: { channel: 'D1', ts },
        deliveredAt: t0,
      });
      const [amy, zed, kim] = [
        copy('amy@example.test', '1.1'),
        copy('zed@example.test', '1.2'),
        copy('kim@example.test', '1.3'),
      ];
      const field = (record: { recipient: string }) => JSON.stringify([record.recipient, 'slack']);
      // Recorded zed first, then amy; the hash alone would not say so.
      await shared!.hSet(`${keyPrefix}deliveries:req_2`, {
        [field(amy)]: JSON.stringify(amy),
        [field(zed)]: JSON.stringify(zed),
      });
      await shared!.rPush(`${keyPrefix}delivery-order:req_2`, [field(zed), field(amy)]);
      expect(await deliveries.listDeliveries('req_2')).toEqual([zed, amy]);
      await deliveries.addDelivery(kim);
      const zedAgain = { ...zed, ref: { channel: 'D1', ts: '1.4' } };
      await deliveries.addDelivery(zedAgain);
      expect(await deliveries.listDeliveries('req_2')).toEqual([zedAgain, amy, kim]);
    }));

  it('reads and updates a request stored as an object by earlier releases, storing it compactly', () =>
    withStorage(async ({ requests }, keyPrefix) => {
      const legacy: InteractiveRequest = {
        ...request('req_legacy', 0),
        recipients: [
          {
            email: 'Bob@Example.test',
            key: 'bob@example.test',
            value: null,
            respondedAt: null,
            expired: false,
          },
        ],
      };
      const key = `${keyPrefix}request:req_legacy`;
      await shared!.hSet(key, { json: JSON.stringify(legacy), version: '0' });
      expect(await requests.getRequest('req_legacy')).toEqual(legacy);
      const answered: InteractiveRequest = {
        ...legacy,
        version: 1,
        recipients: [{ ...legacy.recipients[0]!, value: 'yes', respondedAt: t0 + 1 }],
      };
      expect(await requests.updateRequest(answered, 0, { enqueue: [], cancel: [] })).toBe(true);
      expect((await shared!.get(key))?.startsWith('1:["org_1",["usr_1","Ada"],1,')).toBe(true);
      expect(await requests.getRequest('req_legacy')).toEqual(answered);
    }));

  it('reads and updates a request hash of the release before, rewriting it as a string', () =>
    withStorage(async ({ requests }, keyPrefix) => {
      await requests.createRequest(request('req_hashed', 0), { enqueue: [], cancel: [] });
      const key = `${keyPrefix}request:req_hashed`;
      const [version, json] = ((await shared!.get(key)) ?? '').split(/:(.*)/s);
      expect(version).toBe('0');
      await shared!.del(key);
      await shared!.hSet(key, { version: '0', json: json! });
      await shared!.pExpire(key, 600_000);
      expect(await requests.getRequest('req_hashed')).toEqual(request('req_hashed', 0));
      expect(await requests.updateRequest(request('req_hashed', 1), 1, { enqueue: [], cancel: [] })).toBe(
        false,
      );
      expect(await requests.updateRequest(request('req_hashed', 1), 0, { enqueue: [], cancel: [] })).toBe(
        true,
      );
      expect(await shared!.type(key)).toBe('string');
      expect(await shared!.pTTL(key)).toBeGreaterThan(500_000);
      expect(await requests.getRequest('req_hashed')).toEqual(request('req_hashed', 1));
    }));

  it('keeps a request as one string of its version and JSON, keeping its expiry on a write without one', () =>
    withStorage(async ({ requests }, keyPrefix) => {
      const key = `${keyPrefix}request:req_str`;
      await requests.createRequest(request('req_str', 0), { enqueue: [], cancel: [] });
      expect(await shared!.get(key)).toBe(
        `0:["org_1",["usr_1","Ada"],0,0,"Deploy?",["Yes","yes","No","no"],0,60,${t0},null,["bob@example.test"]]`,
      );
      expect(await shared!.pTTL(key)).toBe(-1);
      const finished = { ...request('req_str', 1), status: 'finished' as const, finishedAt: t0 + 1 };
      expect(await requests.updateRequest(finished, 0, { enqueue: [], cancel: [] }, { ttlMs: 600_000 })).toBe(
        true,
      );
      expect(await shared!.pTTL(key)).toBeGreaterThan(500_000);
      const later = { ...finished, version: 2 };
      expect(await requests.updateRequest(later, 1, { enqueue: [], cancel: [] })).toBe(true);
      expect(await shared!.pTTL(key)).toBeGreaterThan(500_000);
      expect(await requests.getRequest('req_str')).toEqual(later);
    }));

  it('keeps the copies of a request as lines of its string, in recording order, through its writes and expiry', () =>
    withStorage(async ({ requests, deliveries }, keyPrefix) => {
      const key = `${keyPrefix}request:req_lines`;
      await requests.createRequest(request('req_lines', 0), { enqueue: [], cancel: [] });
      const copy = (recipient: string, ts: string, deliveredAt = t0) => ({
        sendId: 'req_lines',
        recipient,
        platform: 'slack',
        ref: { channel: 'D1', ts },
        deliveredAt,
      });
      const bob = copy('bób@example.test', '1.1');
      const carol = copy('carol@example.test', '1.2');
      const bobAgain = copy('bób@example.test', '1.3', t0 + 5);
      expect(await deliveries.addDelivery(bob)).toBe(0);
      expect(await deliveries.addDelivery(carol)).toBe(0);
      expect(await deliveries.addDelivery(bobAgain)).toBe(0);
      const line = (record: ReturnType<typeof copy>) =>
        JSON.stringify([record.recipient, record.platform, record.ref, record.deliveredAt]);
      const [head, ...lines] = ((await shared!.get(key)) ?? '').split('\n');
      expect(head).toMatch(/^0:\["org_1",/);
      expect(lines).toEqual([line(bobAgain), line(carol)]);
      expect(
        await shared!.exists([`${keyPrefix}deliveries:req_lines`, `${keyPrefix}delivery-order:req_lines`]),
      ).toBe(0);
      expect(await deliveries.listDeliveries('req_lines')).toEqual([bobAgain, carol]);
      expect(await requests.getRequest('req_lines')).toEqual(request('req_lines', 0));

      // A write of the request keeps its copies; one without a ttl keeps the expiry the key has.
      expect(await requests.updateRequest(request('req_lines', 1), 0, { enqueue: [], cancel: [] })).toBe(
        true,
      );
      expect(await deliveries.listDeliveries('req_lines')).toEqual([bobAgain, carol]);
      await shared!.pExpire(key, 900_000);
      const dave = copy('dave@example.test', '1.4');
      expect(await deliveries.addDelivery(dave)).toBe(1);
      expect(await deliveries.addDelivery({ ...carol, deliveredAt: t0 + 9 })).toBe(1);
      expect(await shared!.pTTL(key)).toBeGreaterThan(800_000);
      expect(await deliveries.listDeliveries('req_lines')).toEqual([
        bobAgain,
        { ...carol, deliveredAt: t0 + 9 },
        dave,
      ]);

      // Finishing it expires its copies with it; a copy recorded with a ttl sets the expiry again.
      const finished = { ...request('req_lines', 2), status: 'finished' as const, finishedAt: t0 + 1 };
      expect(await requests.updateRequest(finished, 1, { enqueue: [], cancel: [] }, { ttlMs: 600_000 })).toBe(
        true,
      );
      expect(await shared!.pTTL(key)).toBeLessThanOrEqual(600_000);
      expect(await deliveries.addDelivery(copy('erin@example.test', '1.5'), { ttlMs: 700_000 })).toBe(2);
      expect(await shared!.pTTL(key)).toBeGreaterThan(600_000);
      expect(await deliveries.addDelivery(bobAgain, { ttlMs: 650_000 })).toBe(2);
      expect(await shared!.pTTL(key)).toBeLessThanOrEqual(650_000);
      expect(await requests.getRequest('req_lines')).toEqual(finished);
      expect((await deliveries.listDeliveries('req_lines')).map((record) => record.recipient)).toEqual([
        'bób@example.test',
        'carol@example.test',
        'dave@example.test',
        'erin@example.test',
      ]);
    }));

  it("names a request's own recipient in a copy's line by index and its time after the creation, and replaces a line of the release before in place", () =>
    withStorage(async ({ requests, deliveries }, keyPrefix) => {
      const key = `${keyPrefix}request:req_index`;
      const waiting = { value: null, respondedAt: null, expired: false };
      const base = request('req_index', 0);
      const pending = {
        ...base,
        recipients: [
          ...base.recipients,
          { email: 'Carol@example.test', key: 'carol@example.test', ...waiting },
        ],
      };
      await requests.createRequest(pending, { enqueue: [], cancel: [] });
      const copy = (recipient: string, deliveredAt: number) => ({
        sendId: 'req_index',
        recipient,
        platform: 'inbox',
        ref: {},
        deliveredAt,
      });
      // A line the release before wrote, then the copies this one records.
      await shared!.append(key, `\n${JSON.stringify(['bob@example.test', 'inbox', {}, t0 + 1])}`);
      await deliveries.addDelivery(copy('carol@example.test', t0 + 6));
      await deliveries.addDelivery(copy('zed@example.test', t0 + 7));
      expect(((await shared!.get(key)) ?? '').split('\n').slice(1)).toEqual([
        `["bob@example.test","inbox",{},${t0 + 1}]`,
        '[1,"inbox",{},6]',
        `["zed@example.test","inbox",{},${t0 + 7}]`,
      ]);
      await deliveries.addDelivery(copy('bob@example.test', t0 + 8));
      await deliveries.addDelivery(copy('carol@example.test', t0 + 9));
      expect(((await shared!.get(key)) ?? '').split('\n').slice(1)).toEqual([
        '[0,"inbox",{},8]',
        '[1,"inbox",{},9]',
        `["zed@example.test","inbox",{},${t0 + 7}]`,
      ]);
      expect(await deliveries.listDeliveries('req_index')).toEqual([
        copy('bob@example.test', t0 + 8),
        copy('carol@example.test', t0 + 9),
        copy('zed@example.test', t0 + 7),
      ]);
    }));

  it('keeps a copy to an address with a lone surrogate apart from the recipient that Redis would read it as', () =>
    withStorage(async ({ requests, deliveries }) => {
      const base = request('req_surrogate', 0);
      const named = { ...base.recipients[0]!, email: '\ufffd@example.test', key: '\ufffd@example.test' };
      await requests.createRequest({ ...base, recipients: [named] }, { enqueue: [], cancel: [] });
      const copy = (recipient: string, ts: string) => ({
        sendId: 'req_surrogate',
        recipient,
        platform: 'inbox',
        ref: { ts },
        deliveredAt: t0,
      });
      await deliveries.addDelivery(copy('\ufffd@example.test', '1'));
      await deliveries.addDelivery(copy('\ud800@example.test', '2'));
      expect(await deliveries.listDeliveries('req_surrogate')).toEqual([
        copy('\ufffd@example.test', '1'),
        copy('\ud800@example.test', '2'),
      ]);
    }));

  it('keeps adding the copies of a request to the hash an earlier release began for them', () =>
    withStorage(async ({ requests, deliveries }, keyPrefix) => {
      await requests.createRequest(request('req_split', 0), { enqueue: [], cancel: [] });
      const copy = (recipient: string) => ({
        sendId: 'req_split',
        recipient,
        platform: 'inbox',
        ref: {},
        deliveredAt: t0,
      });
      const hash = `${keyPrefix}deliveries:req_split`;
      await shared!.hSet(hash, JSON.stringify(['amy@example.test', 'inbox']), JSON.stringify([1, {}, t0]));
      expect(await deliveries.addDelivery(copy('zed@example.test'))).toBe(0);
      expect(await shared!.hLen(hash)).toBe(2);
      expect(await shared!.get(`${keyPrefix}request:req_split`)).not.toContain('\n');
      expect(await deliveries.listDeliveries('req_split')).toEqual([
        copy('amy@example.test'),
        copy('zed@example.test'),
      ]);
    }));

  it('reads and rewrites a request in the array form of the release before, keeping its copies', () =>
    withStorage(async ({ requests, deliveries }, keyPrefix) => {
      const key = `${keyPrefix}request:req_before`;
      await shared!.set(
        key,
        '0:["org_1",["usr_1","Ada"],"req_before",0,"pending","Deploy?",["Yes","yes","No","no"],' +
          `"onUserAction",60,${t0},${t0 + 3_600_000},null,null,null,["bob@example.test",0,null,null,0]]`,
      );
      expect(await requests.getRequest('req_before')).toEqual(request('req_before', 0));
      const bob = {
        sendId: 'req_before',
        recipient: 'bob@example.test',
        platform: 'inbox',
        ref: {},
        deliveredAt: t0,
      };
      expect(await deliveries.addDelivery(bob)).toBe(0);
      expect(await requests.getRequest('req_before')).toEqual(request('req_before', 0));
      expect(await requests.updateRequest(request('req_before', 1), 0, { enqueue: [], cancel: [] })).toBe(
        true,
      );
      expect(await shared!.get(key)).toMatch(
        /^1:\["org_1",\["usr_1","Ada"\],1,.*\n\["bob@example\.test","inbox",\{\},\d+\]$/,
      );
      expect(await deliveries.listDeliveries('req_before')).toEqual([bob]);
    }));

  it('keeps a transport record as one string, and reads and rewrites the hash of earlier releases', () =>
    withStorage(async ({ transportState }, keyPrefix) => {
      await transportState.set('inbox:msg:new', 'a:b "c"');
      expect(await shared!.get(`${keyPrefix}transport-record:inbox:msg:new`)).toBe('1:a:b "c"');
      const legacy = `${keyPrefix}transport-record:inbox:msg:old`;
      await shared!.hSet(legacy, { value: '[0,"x"]', version: '5' });
      expect(await transportState.get('inbox:msg:old')).toEqual({ value: '[0,"x"]', version: 5 });
      expect(await transportState.getMany(['inbox:msg:old', 'inbox:msg:none', 'inbox:msg:new'])).toEqual([
        { value: '[0,"x"]', version: 5 },
        null,
        { value: 'a:b "c"', version: 1 },
      ]);
      expect(await transportState.compareAndSet('inbox:msg:old', 'next', 4)).toBeNull();
      expect(await transportState.compareAndSet('inbox:msg:old', 'next', 5, { ttlMs: 60_000 })).toBe(6);
      expect(await shared!.type(legacy)).toBe('string');
      expect(await transportState.get('inbox:msg:old')).toEqual({ value: 'next', version: 6 });
      expect(await shared!.pTTL(legacy)).toBeGreaterThan(45_000);
      const blind = `${keyPrefix}transport-record:inbox:msg:blind`;
      await shared!.hSet(blind, { value: '[1]', version: '7' });
      expect(await transportState.set('inbox:msg:blind', 'over')).toBe(8);
      expect(await shared!.get(blind)).toBe('8:over');
      expect(await transportState.set('inbox:msg:new', 'again')).toBe(2);
    }));

  it('forgets expired failed callbacks when another is written, whether they were listed or not', () =>
    withStorage(async ({ failedCallbacks }, keyPrefix) => {
      const failure = (requestId: string) => ({
        requestId,
        organizationId: 'org_1',
        url: 'https://hooks.example.test/done',
        attempts: 8,
        lastStatus: 500,
        lastError: 'HTTP 500',
        failedAt: t0,
      });
      // Long enough that none expires while the hundred are written, on a loaded machine too: each
      // write forgets expired ones, which would leave fewer than written.
      const ttlMs = 2_000;
      for (let n = 0; n < 100; n += 1) await failedCallbacks.add(failure(`req_${n}`), { ttlMs });
      await failedCallbacks.add(failure('req_kept'));
      await new Promise((resolve) => setTimeout(resolve, ttlMs + 100));
      const sizes = async () => [
        await shared!.hLen(`${keyPrefix}failed-callbacks`),
        await shared!.zCard(`${keyPrefix}failed-callback-order`),
        await shared!.zCard(`${keyPrefix}failed-callback-expiry`),
      ];
      expect(await sizes()).toEqual([101, 101, 100]);
      // Each write forgets up to 64 of them.
      await failedCallbacks.add(failure('req_new'), { ttlMs: 60_000 });
      expect(await sizes()).toEqual([38, 38, 37]);
      await failedCallbacks.add(failure('req_newer'));
      expect(await sizes()).toEqual([3, 3, 1]);
      expect((await failedCallbacks.list()).map((kept) => kept.requestId)).toEqual([
        'req_kept',
        'req_new',
        'req_newer',
      ]);
    }));

  it('keeps transport state under the key prefix, with expiry left to Redis', () =>
    withStorage(async ({ transportState }, keyPrefix) => {
      await transportState.set('inbox:msg:1', 'v', { ttlMs: 60_000 });
      await transportState.append('inbox:recipient:a', '1', { ttlMs: 30_000 });
      await transportState.set('slack:user', 'u');
      const keys: string[] = [];
      for await (const found of shared!.scanIterator({ MATCH: `${globEscaped(keyPrefix)}*` })) {
        keys.push(...found);
      }
      expect(keys.sort()).toEqual(
        [
          `${keyPrefix}transport-list:inbox:recipient:a`,
          `${keyPrefix}transport-record:inbox:msg:1`,
          `${keyPrefix}transport-record:slack:user`,
        ].sort(),
      );
      const recordTtl = await shared!.pTTL(`${keyPrefix}transport-record:inbox:msg:1`);
      // Set from the 60 s asked for, whatever time a loaded machine took since (not the list's 30 s).
      expect(recordTtl).toBeGreaterThan(45_000);
      expect(recordTtl).toBeLessThanOrEqual(60_000);
      expect(await shared!.pTTL(`${keyPrefix}transport-list:inbox:recipient:a`)).toBeLessThanOrEqual(30_000);
      expect(await shared!.pTTL(`${keyPrefix}transport-record:slack:user`)).toBe(-1);
    }));
});

describe('redis storage errors and scripts', () => {
  it('classifies connection failures, and nothing else, as unavailable', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
    expect(isConnectionError(refused)).toBe(true);
    expect(isConnectionError(new AggregateError([refused], 'all addresses failed'))).toBe(true);
    expect(isConnectionError(new Error('wrapped', { cause: refused }))).toBe(true);
    expect(isConnectionError(new Error('The client is offline'))).toBe(true);
    expect(isConnectionError(new Error('LOADING Redis is loading the dataset in memory'))).toBe(true);
    expect(
      isConnectionError(
        new Error(
          'MISCONF Redis is configured to save RDB snapshots, but it is currently not able to persist on disk.',
        ),
      ),
    ).toBe(true);
    expect(isConnectionError(new Error("OOM command not allowed when used memory > 'maxmemory'."))).toBe(
      true,
    );
    // Redis 6 and earlier wrap the refusal of a write a script made.
    const wrapped = (reply: string) =>
      new Error(`ERR Error running script (call to f_8a1c): @user_script:12: @user_script: 12: ${reply}`);
    expect(isConnectionError(wrapped("-OOM command not allowed when used memory > 'maxmemory'."))).toBe(true);
    expect(isConnectionError(wrapped('-NOREPLICAS Not enough good replicas to write.'))).toBe(true);
    expect(isConnectionError(wrapped("-READONLY You can't write against a read only replica."))).toBe(true);
    expect(isConnectionError(wrapped('-WRONGTYPE Operation against a key holding the wrong kind'))).toBe(
      false,
    );
    expect(isConnectionError(new Error('WRONGTYPE Operation against a key holding the wrong kind'))).toBe(
      false,
    );
    expect(isConnectionError(new RangeError('cost must be a finite number >= 0'))).toBe(false);
    expect(isConnectionError('ECONNREFUSED')).toBe(false);
  });

  it.skipIf(!available)(
    'loads a script the server does not know yet, then runs it from the cache',
    async () => {
      const runner = createRedisRunner(shared!);
      const script = luaScript(`-- ${randomUUID()}\nreturn ARGV[1] .. KEYS[1]`);
      expect(await shared!.sendCommand(['SCRIPT', 'EXISTS', script.sha])).toEqual([0]);
      expect(await runner.evalScript(script, ['b'], ['a'])).toBe('ab');
      expect(await shared!.sendCommand(['SCRIPT', 'EXISTS', script.sha])).toEqual([1]);
      expect(await runner.evalScript(script, ['d'], ['c'])).toBe('cd');
    },
  );
});

describe.skipIf(!available)('redis storage when the connection is lost', () => {
  it('answers unavailable from every port on a closed client', async () => {
    const client = await connected();
    const storage = redisStorage({ client, keyPrefix: freshPrefix() });
    client.destroy();
    for (const call of everyPort(storage)) await expectUnavailable(call());
  });

  it('answers unavailable at once while the client cannot reach a server at all', async () => {
    const probeServer = createServer();
    probeServer.listen(0, '127.0.0.1');
    await once(probeServer, 'listening');
    const { port } = probeServer.address() as AddressInfo;
    await new Promise((resolve) => probeServer.close(resolve));
    const client = newClient(`redis://127.0.0.1:${port}`);
    const connecting = client.connect().catch(() => undefined);
    const storage = redisStorage({ client, keyPrefix: freshPrefix() });
    try {
      for (const call of everyPort(storage)) await expectUnavailable(call());
    } finally {
      client.destroy();
      await connecting;
    }
  });

  it('answers unavailable during an outage and recovers by itself when the server is back', async () => {
    const proxy = await outageProxy();
    const client = await connected(proxy.url);
    const keyPrefix = freshPrefix();
    const storage = redisStorage({ client, keyPrefix });
    try {
      await storage.directory.saveOrganization({ id: 'org_1', name: 'Acme' });
      await proxy.stop();
      await until(() => !client.isReady);
      for (const call of everyPort(storage)) await expectUnavailable(call());
      await proxy.start();
      await until(() => client.isReady);
      expect(await within(1_000, storage.directory.getOrganization('org_1'))).toEqual({
        id: 'org_1',
        name: 'Acme',
      });
      expect(await within(1_000, storage.dueWork.nextRunAt())).toBeNull();
    } finally {
      client.destroy();
      await proxy.close();
      await dropPrefix(shared!, keyPrefix);
    }
  });

  it('makes the API answer 503 with Retry-After during an outage, and 200 once Redis is back', async () => {
    const proxy = await outageProxy();
    const client = await connected(proxy.url);
    const keyPrefix = freshPrefix();
    const storage = redisStorage({ client, keyPrefix });
    const notifier = createNotifier({ storage, transports: [inboxTransport()] });
    const send = () =>
      within(
        2_000,
        notifier.handle({
          method: 'POST',
          url: '/api/notify',
          headers: { 'x-api-key': testKeys.alice, 'content-type': 'application/json' },
          body: [JSON.stringify({ user_emails: ['bob@acme.test'], message: 'Deployed' })],
          clientAddress: '127.0.0.1',
        }),
      );
    try {
      await notifier.seed(testSeed);
      expect((await send())?.status).toBe(200);
      await proxy.stop();
      await until(() => !client.isReady);
      const refused = await send();
      expect(refused?.status).toBe(503);
      expect(refused?.headers['retry-after']).toBe('1');
      await proxy.start();
      await until(() => client.isReady);
      expect((await send())?.status).toBe(200);
    } finally {
      await notifier.stop();
      client.destroy();
      await proxy.close();
      await dropPrefix(shared!, keyPrefix);
    }
  });

  it('rejects a command in flight when the connection drops, instead of leaving it pending', async () => {
    const proxy = await outageProxy();
    const client = await connected(proxy.url);
    const storage = redisStorage({ client, keyPrefix: freshPrefix() });
    try {
      proxy.blackhole();
      const pending = storage.requests.getRequest('req_1');
      await new Promise((resolve) => setTimeout(resolve, 50));
      await proxy.stop();
      await expectUnavailable(pending);
    } finally {
      client.destroy();
      await proxy.close();
    }
  });

  it('answers unavailable to the calls a CLIENT KILL cut off, and works again after the reconnect', async () => {
    const client = await connected();
    const keyPrefix = freshPrefix();
    const storage = redisStorage({ client, keyPrefix });
    try {
      await storage.directory.saveOrganization({ id: 'org_1', name: 'Acme' });
      const id = await client.clientId();
      // node-redis reconnects at once after a kill, so the calls must be in flight when it lands: a
      // blocking command holds the connection, and the store calls wait behind it on the server.
      const blocker = client.sendCommand(['BLPOP', `${keyPrefix}never`, '5']).catch(() => undefined);
      const cutOff = [
        storage.directory.getOrganization('org_1'),
        storage.rateLimits.take([{ key: 'k', capacity: 1, refillPerSecond: 1 }], 1),
        storage.dueWork.claim(t0, 10, 1000),
      ].map(expectUnavailable);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await shared!.sendCommand(['CLIENT', 'KILL', 'ID', String(id)]);
      await Promise.all(cutOff);
      await blocker;
      await until(() => client.isReady);
      expect(await within(1_000, storage.directory.getOrganization('org_1'))).toEqual({
        id: 'org_1',
        name: 'Acme',
      });
    } finally {
      client.destroy();
      await dropPrefix(shared!, keyPrefix);
    }
  });

  it('lets errors that are not about the connection through unchanged', async () => {
    const keyPrefix = freshPrefix();
    const storage = redisStorage({ client: shared!, keyPrefix });
    const id = `req_${randomUUID().replaceAll('-', '')}`;
    await storage.requests.createRequest(request(id, 0), { enqueue: [], cancel: [] });
    // Something else wrote a string where the adapter keeps a sorted set: Redis's WRONGTYPE error surfaces as is.
    await shared!.set(`${keyPrefix}due`, 'not a sorted set');
    const error = await storage.dueWork.nextRunAt().catch((reason: unknown) => reason);
    expect(isNotifyError(error)).toBe(false);
    expect(String(error)).toMatch(/WRONGTYPE/);
    await expect(storage.rateLimits.take([], -1)).rejects.toThrow(RangeError);
    await dropPrefix(shared!, keyPrefix);
  });
});

import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { timeoutItemId } from '../../core/domain/due-work.js';
import type { InteractiveRequest } from '../../core/domain/interactive-request.js';
import { NotifyError } from '../../core/errors.js';
import type { StoragePorts } from '../../core/ports/storage.js';
import { redisTestStorages, redisUrl } from '../support/redis.js';
import { callbackSetup, interactive, tableResolver } from './callback-setup.js';

/** Stands in for DNS: one public name, one private. */
const dns = { 'public.example': ['93.184.216.34'], 'private.example': ['10.0.0.5'] };

const redis = await redisTestStorages();

afterAll(async () => {
  await redis?.release();
});

/** Storage of one test (memory on the wall clock, or Redis under a prefix of its own), and how to let 2 ms pass on it. */
const storages: Array<[string, () => { storage: StoragePorts; pass: () => Promise<void> }]> = [
  ['memory', () => ({ storage: memoryStorage(), pass: () => sleep(2) })],
];
if (redis) {
  // Redis expires keys by its own clock: the test waits in real time.
  storages.push(['redis', () => ({ storage: redis.storage(), pass: () => sleep(5) })]);
} else {
  console.warn(`callback_url admission tests on Redis skipped: no Redis answers at ${redisUrl}`);
}

/**
 * The storage with its request writes and key acquisitions recorded: a create or an acquisition
 * through it is a storage step of its own, where the admission's are not.
 */
function recorded(storage: StoragePorts): {
  storage: StoragePorts;
  creates: string[];
  updates: InteractiveRequest[];
  acquisitions: string[];
} {
  const creates: string[] = [];
  const updates: InteractiveRequest[] = [];
  const acquisitions: string[] = [];
  const idempotency = {
    ...storage.idempotency,
    acquire: (...args: Parameters<StoragePorts['idempotency']['acquire']>) => {
      acquisitions.push(args[0].key);
      return storage.idempotency.acquire(...args);
    },
  };
  const requests = {
    ...storage.requests,
    createRequest: (...args: Parameters<StoragePorts['requests']['createRequest']>) => {
      creates.push(args[0].id);
      return storage.requests.createRequest(...args);
    },
    updateRequest: (...args: Parameters<StoragePorts['requests']['updateRequest']>) => {
      updates.push(args[0]);
      return storage.requests.updateRequest(...args);
    },
  };
  return { storage: { ...storage, requests, idempotency }, creates, updates, acquisitions };
}

describe.each(storages)('a send with a callback_url and no Idempotency-Key, on %s', (_name, make) => {
  it("stores its request with its callback in the admission's step, never through a create of its own", async () => {
    const { storage } = make();
    const spied = recorded(storage);
    const setup = await callbackSetup({ resolver: tableResolver(dns), storage: spied.storage });
    const sent = await setup.send(interactive('https://public.example/hook'));
    expect(sent.status).toBe(200);
    const id = sent.body.request_id as string;
    expect(await storage.requests.getRequest(id)).toMatchObject({
      id,
      version: 0,
      status: 'pending',
      callback: { url: 'https://public.example/hook', secret: sent.body.callback_secret },
    });
    expect(spied.creates).toEqual([]);
    expect(spied.updates).toEqual([]);
    await setup.notifier.stop();
  });

  it('withdraws that request when the address is refused: no timeout is left and it cannot be read', async () => {
    const { storage, pass } = make();
    const spied = recorded(storage);
    const setup = await callbackSetup({ resolver: tableResolver(dns), storage: spied.storage });
    const sent = await setup.send(interactive('https://private.example/hook'));
    expect(sent).toEqual({
      status: 422,
      body: {
        status: 'error',
        details: 'response_request.callback_url: the host does not resolve to a public address',
      },
    });
    // Stored by the admission (no create of the core's), then finished by the withdrawal alone.
    expect(spied.creates).toEqual([]);
    expect(spied.updates).toHaveLength(1);
    const withdrawn = spied.updates[0]!;
    expect(withdrawn).toMatchObject({ version: 1, status: 'finished' });
    expect(await storage.dueWork.nextRunAt()).toBeNull();
    await pass();
    expect(await storage.requests.getRequest(withdrawn.id)).toBeNull();
    await setup.notifier.stop();
  });
});

describe.each(storages)('a send with a callback_url and an Idempotency-Key, on %s', (_name, make) => {
  const key = { 'idempotency-key': 'k-callback' };

  it.each([
    ['a private address', 'https://private.example/hook'],
    ['a host that does not resolve', 'https://nowhere.example/hook'],
    ['an address written as a private IP', 'https://10.0.0.7/hook'],
  ])(
    'answers a malformed key 400 before it looks at the callback address (%s): docs/behaviour.md#order-of-checks',
    async (_what, url) => {
      const { storage } = make();
      const looked: string[] = [];
      const resolver = {
        resolve: async (host: string) => {
          looked.push(host);
          return tableResolver(dns).resolve(host);
        },
      };
      const setup = await callbackSetup({ resolver, storage });
      const sent = await setup.send(interactive(url), { 'idempotency-key': 'caf\u00e9' });
      expect(sent).toEqual({
        status: 400,
        body: {
          status: 'error',
          details:
            'Idempotency-Key: must be 1 to 255 printable ASCII characters, without spaces at either end',
        },
      });
      expect(looked).toEqual([]);
      await setup.notifier.stop();
    },
  );

  it.each([
    ['http:', 'http://public.example/hook', 'must be an absolute https: URL'],
    ['with user info', 'https://user:pw@public.example/hook', 'must not contain user info'],
    ['on port 0', 'https://public.example:0/hook', 'must not use port 0'],
  ])(
    'answers a callback address %s 400 as the body is, before the record of a used or running key: docs/behaviour.md#order-of-checks',
    async (_what, url, rule) => {
      const { storage } = make();
      const setup = await callbackSetup({ resolver: tableResolver(dns), storage });
      const refused = {
        status: 400,
        body: { status: 'error', details: `response_request.callback_url: ${rule}` },
      };
      // A used key, which would answer another body 422, and a running one, which would answer 409.
      expect((await setup.send(interactive('https://public.example/hook'), key)).status).toBe(200);
      expect(await setup.send(interactive(url), key)).toEqual(refused);
      await storage.idempotency.acquire(
        { organizationId: 'acme', key: 'k-running' },
        'another body',
        'req_running',
        { now: Date.now(), leaseMs: 60_000, ttlMs: 60_000 },
      );
      expect(await setup.send(interactive(url), { 'idempotency-key': 'k-running' })).toEqual(refused);
      await setup.notifier.stop();
    },
  );

  it("acquires the key and stores its request in the admission's step: a repeat replays it", async () => {
    const { storage } = make();
    const spied = recorded(storage);
    const setup = await callbackSetup({ resolver: tableResolver(dns), storage: spied.storage });
    const sent = await setup.send(interactive('https://public.example/hook'), key);
    expect(sent.status).toBe(200);
    expect(await storage.requests.getRequest(sent.body.request_id as string)).toMatchObject({
      version: 0,
      status: 'pending',
      callback: { url: 'https://public.example/hook' },
    });
    expect(spied.creates).toEqual([]);
    expect(spied.acquisitions).toEqual([]);
    await sleep(5);
    expect(await setup.send(interactive('https://public.example/hook'), key)).toEqual(sent);
    expect(spied.creates).toEqual([]);
    expect(spied.acquisitions).toEqual([]);
    expect(spied.updates).toEqual([]);
    await setup.notifier.stop();
  });

  it('replays a completed send whose callback host no longer resolves, without looking it up', async () => {
    const { storage } = make();
    const resolver = tableResolver({ 'gone.example': [['93.184.216.34'], []] });
    const setup = await callbackSetup({ resolver, storage });
    const sent = await setup.send(interactive('https://gone.example/hook'), key);
    expect(sent.status).toBe(200);
    await sleep(5);
    expect(await setup.send(interactive('https://gone.example/hook'), key)).toEqual(sent);
    expect(resolver.lookups).toEqual(['gone.example']);
    // A repeat with another body is refused as one, not for its address.
    const other = await setup.send(interactive('https://gone.example/other'), key);
    expect(other).toMatchObject({
      status: 422,
      body: { details: expect.stringMatching(/different request body/) },
    });
    expect(resolver.lookups).toEqual(['gone.example']);
    await setup.notifier.stop();
  });

  it('withdraws the request when the address is refused, and keeps the 422 under the key, as any 422 of a send: docs/behaviour.md#idempotency', async () => {
    const { storage, pass } = make();
    const spied = recorded(storage);
    const resolver = tableResolver(dns);
    const setup = await callbackSetup({ resolver, storage: spied.storage });
    const refused = await setup.send(interactive('https://private.example/hook'), key);
    expect(refused).toEqual({
      status: 422,
      body: {
        status: 'error',
        details: 'response_request.callback_url: the host does not resolve to a public address',
      },
    });
    expect(spied.updates).toHaveLength(1);
    const withdrawn = spied.updates[0]!;
    expect(withdrawn).toMatchObject({ version: 1, status: 'finished' });
    expect(await storage.dueWork.nextRunAt()).toBeNull();
    await pass();
    expect(await storage.requests.getRequest(withdrawn.id)).toBeNull();
    // A repeat gets the same answer, replayed without a lookup; a corrected body needs a new key.
    expect(await setup.send(interactive('https://private.example/hook'), key)).toEqual(refused);
    expect(resolver.lookups).toEqual(['private.example']);
    const corrected = await setup.send(interactive('https://public.example/hook'), key);
    expect(corrected).toMatchObject({
      status: 422,
      body: { details: expect.stringMatching(/different request body/) },
    });
    const accepted = await setup.send(interactive('https://public.example/hook'), {
      'idempotency-key': 'corrected',
    });
    expect(accepted.status).toBe(200);
    expect(spied.creates).toEqual([]);
    await setup.notifier.stop();
  });

  it('gives the key back when the lookup itself failed (DNS down): a repeat looks the host up again', async () => {
    const { storage } = make();
    const lookups: string[] = [];
    const resolver = {
      resolve: async (hostname: string) => {
        lookups.push(hostname);
        if (lookups.length === 1)
          throw Object.assign(new Error(`queryA ESERVFAIL ${hostname}`), { code: 'ESERVFAIL' });
        return ['93.184.216.34'];
      },
    };
    const setup = await callbackSetup({ resolver, storage });
    const body = interactive('https://public.example/hook');
    expect((await setup.send(body, key)).status).toBe(422);
    const repeat = await setup.send(body, key);
    expect(repeat.status).toBe(200);
    expect(lookups).toEqual(['public.example', 'public.example']);
    await setup.notifier.stop();
  });

  it('leaves an earlier failed attempt of the key to be resumed when a repeat is refused', async () => {
    const { storage } = make();
    const spied = recorded(storage);
    let firstSendId: string | undefined;
    let refusing = true;
    const failing: StoragePorts = {
      ...spied.storage,
      deliveries: {
        ...storage.deliveries,
        addDelivery: (...args) => {
          if (!refusing) return storage.deliveries.addDelivery(...args);
          firstSendId = args[0].sendId;
          return Promise.reject(
            new NotifyError('unavailable', 'the store stands down for the first attempt'),
          );
        },
      },
    };
    // The name's address changes between the attempts, as DNS may.
    const resolver = tableResolver({ 'flip.example': [['93.184.216.34'], ['10.0.0.5'], ['93.184.216.34']] });
    const setup = await callbackSetup({ resolver, storage: failing });
    const body = interactive('https://flip.example/hook');
    expect((await setup.send(body, key)).status).toBe(503);
    refusing = false;
    expect((await setup.send(body, key)).status).toBe(422);
    // The refused repeat resumed the attempt without storing anything, and failed it again: the
    // first attempt's timeout is the only one pending.
    expect(spied.creates).toEqual([]);
    expect(spied.updates).toEqual([]);
    const pending = await storage.dueWork.claim(Date.now() + 24 * 60 * 60_000, 10, 1);
    expect(pending.map((item) => item.id)).toEqual([timeoutItemId(firstSendId!)]);
    const resumed = await setup.send(body, key);
    expect(resumed.status).toBe(200);
    expect(resumed.body.request_id).toBe(firstSendId);
    expect(await storage.requests.getRequest(firstSendId!)).toMatchObject({ version: 0, status: 'pending' });
    await setup.notifier.stop();
  });
});

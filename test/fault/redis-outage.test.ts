import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type RedisServerProcess,
  redisServerForTests,
  redisServerProcess,
} from '../support/redis-server-process.js';
import { type StandaloneProcess, startStandaloneProcess } from '../support/standalone-process.js';

const installed = await redisServerForTests('Redis outage test');

const demoKey = 'cnk_demo_alice_0000000000000000000000001';
const send = (host: StandaloneProcess) =>
  fetch(`${host.base}/api/notify`, {
    method: 'POST',
    headers: { 'x-api-key': demoKey, 'content-type': 'application/json' },
    body: JSON.stringify({ user_emails: ['bob@acme.test'], message: 'During the outage' }),
    signal: AbortSignal.timeout(10_000),
  });

/** A private `redis-server` and the standalone service on it, for the tests of one `describe`. */
function standaloneOnOwnRedis(): { redis: RedisServerProcess; host: StandaloneProcess } {
  const world = {} as { redis: RedisServerProcess; host: StandaloneProcess };
  beforeAll(async () => {
    world.redis = await redisServerProcess();
    await world.redis.start();
    world.host = await startStandaloneProcess({ NOTIFY_STORAGE: world.redis.url, LOG_LEVEL: 'info' });
  }, 30_000);
  afterAll(async () => {
    world.redis?.thaw();
    await world.host?.stop();
    await world.redis?.stop();
  });
  return world;
}

/** Expects the answer of a store that cannot be reached: 503, Retry-After and the error body. */
async function expectUnavailable(response: Response): Promise<void> {
  expect(response.status).toBe(503);
  expect(response.headers.get('retry-after')).toBe('1');
  expect(await response.json()).toEqual({ status: 'error', details: 'Storage is temporarily unavailable' });
}

/** The status of a send once the service no longer answers 503, trying for up to 10 s. */
async function statusOnceServing(host: StandaloneProcess): Promise<number> {
  let status = 503;
  for (let i = 0; i < 50 && status === 503; i += 1) {
    await new Promise((r) => setTimeout(r, 200));
    status = (await send(host)).status;
  }
  return status;
}

describe.skipIf(!installed)('losing the Redis server at run time', () => {
  const world = standaloneOnOwnRedis();

  it('answers 503 with Retry-After and the error body while Redis is down, never 500 or a hang, and recovers by itself', async () => {
    const { redis, host } = world;
    expect((await send(host)).status).toBe(200);
    await redis.stop();
    for (let i = 0; i < 5; i += 1) {
      const started = Date.now();
      await expectUnavailable(await send(host));
      expect(Date.now() - started).toBeLessThan(5_000);
    }
    const status = await fetch(`${host.base}/api/notify/status/req_000000000000000000000000`, {
      headers: { 'x-api-key': demoKey },
    });
    expect(status.status).toBe(503);
    await redis.start();
    // The restarted server kept nothing: the service loads its seed again, and the demo key works.
    await host.next((line) => line.message === 'seed loaded again: the storage came back without it');
    expect((await send(host)).status).toBe(200);
  }, 60_000);
});

describe.skipIf(!installed)('a Redis server that stops answering without closing its connections', () => {
  const world = standaloneOnOwnRedis();

  it('answers 503 once it has given no reply for 5 s, at once after that, and serves again when it answers', async () => {
    const { redis, host } = world;
    expect((await send(host)).status).toBe(200);
    redis.freeze();
    let started = Date.now();
    await expectUnavailable(await send(host));
    expect(Date.now() - started).toBeLessThan(9_000);
    started = Date.now();
    expect((await send(host)).status).toBe(503);
    expect(Date.now() - started).toBeLessThan(1_000);
    redis.thaw();
    expect(await statusOnceServing(host)).toBe(200);
  }, 60_000);
});

describe.skipIf(!installed)('a Redis server that refuses writes', () => {
  const world = standaloneOnOwnRedis();

  it.each([
    [
      'out of memory under noeviction',
      ['maxmemory', '1', 'maxmemory-policy', 'noeviction'],
      ['maxmemory', '0'],
    ],
    [
      'too few replicas for min-replicas-to-write',
      ['min-replicas-to-write', '1'],
      ['min-replicas-to-write', '0'],
    ],
  ])(
    '(%s): answers 503 with Retry-After to sends and status reads, and serves again once it takes writes',
    async (_what, refuse, allow) => {
      const { redis, host } = world;
      const admin = createClient({ url: redis.url });
      await admin.connect();
      try {
        expect((await send(host)).status).toBe(200);
        await admin.sendCommand(['CONFIG', 'SET', ...refuse]);
        await expectUnavailable(await send(host));
        await expectUnavailable(
          await fetch(`${host.base}/api/notify/status/req_000000000000000000000000`, {
            headers: { 'x-api-key': demoKey },
          }),
        );
        await admin.sendCommand(['CONFIG', 'SET', ...allow]);
        expect(await statusOnceServing(host)).toBe(200);
      } finally {
        await admin.sendCommand(['CONFIG', 'SET', ...allow]);
        admin.destroy();
      }
    },
    60_000,
  );
});

import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import type { StoragePorts } from '../../core/ports/storage.js';
import { redisTestStorages, redisUrl } from '../support/redis.js';
import { type Answer, expectError, expectOk, inbox, plainBody, readStatus, send } from './client.js';
import { hostKinds, startTestHost, type TestHost, type TestHostOptions } from './harness.js';

const perKeyText = 'Per-key rate limit exceeded (3 burst / 1 per second)';
const blockedText = 'Too many failed authentication attempts from this address';

/** Failed authentications barely refill, so that a spent budget stays spent during a test. */
const twoFailures = { failedAuthentication: { burst: 2, perSecond: 0.001 } };

const redis = await redisTestStorages();

afterAll(async () => {
  await redis?.release();
});

/** Storage of one test: memory, or Redis under a key prefix no other test uses. */
const storages: Array<[string, () => StoragePorts]> = [['memory', () => memoryStorage()]];
if (redis) {
  storages.push(['redis', () => redis.storage()]);
} else {
  console.warn(`failed-authentication tests on Redis skipped: no Redis answers at ${redisUrl}`);
}

/** Sends guessed keys until the address is refused; answers how many were told 401 first. */
async function spendFailures(host: TestHost, headers: Record<string, string> = {}): Promise<number> {
  for (let i = 0; i < 100; i += 1) {
    const answer = await send(host, plainBody(), { key: `cnk_guess_${i}_0000000000000000000000`, headers });
    if (answer.status === 429) {
      expectError(answer, 429, blockedText);
      return i;
    }
    expectError(answer, 401, 'Invalid API key');
  }
  throw new Error('no 429 after 100 failed authentications');
}

const expectBlocked = (answer: Answer) => {
  expectError(answer, 429, blockedText);
  expect(answer.headers.get('retry-after')).toBe('1');
};

describe.each(hostKinds)('failed authentication never locks out a valid key (%s)', (kind) => {
  let host: TestHost;
  afterEach(async () => {
    await host.close();
  });

  describe.each(storages)('on %s storage', (_name, storage) => {
    const start = async (options: TestHostOptions = {}) => {
      host = await startTestHost(kind, { storage: storage(), ...options });
      return host;
    };

    it('serves valid keys from an address out of failed-authentication tokens, and keeps refusing guesses', async () => {
      // Redis refills on its own clock, in real time: a slow refill keeps the count exact.
      await start({ rateLimits: { failedAuthentication: { burst: 20, perSecond: 0.001 } } });
      expect(await spendFailures(host)).toBe(20);
      expectOk(await send(host, plainBody()));
      expectOk(await send(host, plainBody(), { key: host.keys.bob }));
      expectError(await readStatus(host, `req_${'A'.repeat(24)}`), 404, 'Request not found');
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(2);
      // Successes refill nothing: guesses, and requests without a key, are still refused.
      expectBlocked(await send(host, plainBody(), { key: 'cnk_guess_again_000000000000000000000' }));
      expectBlocked(await send(host, plainBody(), { key: null }));
    });

    it('judges a valid key there by its own per-key limit only', async () => {
      await start({ rateLimits: { perKey: { burst: 3, perSecond: 1 }, ...twoFailures } });
      await spendFailures(host);
      for (let i = 0; i < 3; i += 1) expectOk(await send(host, plainBody()));
      const limited = await send(host, plainBody());
      expectError(limited, 429, perKeyText);
      expect(limited.headers.get('retry-after')).toBe('1');
    });

    it('lets the library authenticate a valid key from a blocked address', async () => {
      await start({ rateLimits: twoFailures });
      for (let i = 0; i < 2; i += 1) {
        await expect(host.notifier.authenticate(`cnk_wrong_${i}`, '198.51.100.9')).rejects.toMatchObject({
          details: 'Invalid API key',
        });
      }
      await expect(host.notifier.authenticate('cnk_wrong', '198.51.100.9')).rejects.toMatchObject({
        code: 'rate_limited',
      });
      const principal = await host.notifier.authenticate(host.keys.alice, '198.51.100.9');
      expect(principal.user.email).toBe('alice@acme.test');
    });
  });
});

describe.each(hostKinds)('the client address of failed authentications (%s)', (kind) => {
  let host: TestHost;
  afterEach(async () => {
    await host.close();
  });

  const start = async (trustProxy?: number | readonly string[]) => {
    host = await startTestHost(kind, {
      rateLimits: twoFailures,
      ...(trustProxy === undefined ? {} : { trustProxy }),
    });
  };
  const guess = (forwardedFor?: string) =>
    send(host, plainBody(), {
      key: 'cnk_guess_0000000000000000000000000000',
      headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
    });

  it('ignores X-Forwarded-For by default: every client behind the socket address shares its budget', async () => {
    await start();
    expectError(await guess('203.0.113.1'), 401);
    expectError(await guess('203.0.113.2'), 401);
    expectBlocked(await guess('203.0.113.3'));
    expectBlocked(await guess());
  });

  it('ignores X-Forwarded-For with trustProxy 0', async () => {
    await start(0);
    expectError(await guess('203.0.113.1'), 401);
    expectError(await guess('203.0.113.2'), 401);
    expectBlocked(await guess('203.0.113.3'));
  });

  it('with trustProxy 1, limits the address the proxy saw (the last X-Forwarded-For entry)', async () => {
    await start(1);
    // A client cannot escape its budget by writing addresses of its own in front.
    expectError(await guess('10.0.0.1, 203.0.113.1'), 401);
    expectError(await guess('10.0.0.2, 203.0.113.1'), 401);
    expectBlocked(await guess('10.0.0.3, 203.0.113.1'));
    expectBlocked(await guess('203.0.113.1'));
    // Another client behind the same proxy has its own budget.
    expectError(await guess('203.0.113.2'), 401);
    // Without the header, the socket's address is the client.
    expectError(await guess(), 401);
  });

  it('with trustProxy 2, takes the second entry from the right', async () => {
    await start(2);
    expectError(await guess('198.51.100.1, 203.0.113.1, 10.0.0.1'), 401);
    expectError(await guess('198.51.100.2, 203.0.113.1, 10.0.0.2'), 401);
    expectBlocked(await guess('203.0.113.1, 10.0.0.3'));
    expectError(await guess('203.0.113.2, 10.0.0.1'), 401);
  });

  it('with a list, walks X-Forwarded-For from the right past trusted proxies (addresses and CIDRs)', async () => {
    await start(['127.0.0.1', '10.0.0.0/8']);
    expectError(await guess('198.51.100.1, 203.0.113.1, 10.1.2.3'), 401);
    expectError(await guess('198.51.100.2, 203.0.113.1, 127.0.0.1'), 401);
    expectBlocked(await guess('203.0.113.1'));
    expectError(await guess('203.0.113.2, 10.9.9.9'), 401);
  });

  it('counts the failures of every IPv6 address of a /64 together, and those of another /64 apart', async () => {
    await start(1);
    expectError(await guess('2001:db8:1:2::1'), 401);
    expectError(await guess('2001:db8:1:2:ffff:ffff:ffff:ffff'), 401);
    expectBlocked(await guess('2001:DB8:1:2:0:0:0:7'));
    expectError(await guess('2001:db8:1:3::1'), 401);
    // An IPv4-mapped address is the IPv4 address it carries, alone.
    expectError(await guess('::ffff:203.0.113.7'), 401);
    expectError(await guess('203.0.113.8'), 401);
  });

  it('with a list that does not hold the socket address, ignores X-Forwarded-For', async () => {
    await start(['10.0.0.0/8', '::1']);
    expectError(await guess('203.0.113.1'), 401);
    expectError(await guess('203.0.113.2'), 401);
    expectBlocked(await guess('203.0.113.3'));
  });
});

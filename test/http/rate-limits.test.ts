import { afterEach, describe, expect, it } from 'vitest';
import {
  type Answer,
  createKey,
  expectError,
  expectOk,
  inbox,
  interactiveBody,
  plainBody,
  readStatus,
  send,
} from './client.js';
import { hostKinds, startTestHost, type TestHost, type TestHostOptions } from './harness.js';

const perKeyText = 'Per-key rate limit exceeded (10 burst / 2 per second)';
const perOrgText = 'Per-organization rate limit exceeded (50 burst / 5 per second)';

/** A 429 with `Retry-After: 1` and the exact `details` (docs/behaviour.md#rate-limits, docs/http-api.md#error-reference). */
function expectLimited(answer: Answer, details: string): void {
  expectError(answer, 429, details);
  expect(answer.headers.get('retry-after')).toBe('1');
}

describe.each(hostKinds)('rate limits (%s)', (kind) => {
  let host: TestHost;
  const start = async (options: TestHostOptions = {}) => {
    host = await startTestHost(kind, options);
    return host;
  };
  afterEach(async () => {
    await host.close();
  });

  /** `count` sends with `key`, each expected to be accepted. */
  const sendOk = async (count: number, key: string) => {
    for (let i = 0; i < count; i += 1) expectOk(await send(host, plainBody(), { key }));
  };

  describe('per key: 10 burst / 2 per second', () => {
    it('accepts 10 quick requests and refuses the 11th with the exact text and Retry-After: 1', async () => {
      await start();
      await sendOk(10, host.keys.alice);
      expectLimited(await send(host, plainBody()), perKeyText);
      expectLimited(await send(host, plainBody()), perKeyText);
      // Refused requests deliver nothing.
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(10);
    });

    it('refills 2 per second: 500 ms later exactly one more request passes', async () => {
      await start();
      await sendOk(10, host.keys.alice);
      expectLimited(await send(host, plainBody()), perKeyText);
      host.clock.advance(499);
      expectLimited(await send(host, plainBody()), perKeyText);
      host.clock.advance(1);
      expectOk(await send(host, plainBody()));
      expectLimited(await send(host, plainBody()), perKeyText);
      host.clock.advance(500);
      expectOk(await send(host, plainBody()));
      expectLimited(await send(host, plainBody()), perKeyText);
    });

    it('refills to the burst and no further: after a long pause 10 pass, the 11th is refused', async () => {
      await start();
      await sendOk(10, host.keys.alice);
      host.clock.advance(60_000);
      await sendOk(10, host.keys.alice);
      expectLimited(await send(host, plainBody()), perKeyText);
    });

    it('sustains 2 requests per second indefinitely', async () => {
      await start();
      await sendOk(10, host.keys.alice);
      for (let second = 0; second < 5; second += 1) {
        host.clock.advance(1000);
        await sendOk(2, host.keys.alice);
        expectLimited(await send(host, plainBody()), perKeyText);
      }
    });

    it('counts status reads, and limits them too', async () => {
      await start();
      const id = `req_${'A'.repeat(24)}`;
      for (let i = 0; i < 10; i += 1) expectError(await readStatus(host, id), 404, 'Request not found');
      expectLimited(await readStatus(host, id), perKeyText);
      expectLimited(await send(host, plainBody()), perKeyText);
      expect(await inbox(host, 'bob@acme.test')).toEqual([]);
    });

    it('counts invalid requests, and checks the limit before the body (docs/behaviour.md#idempotency order)', async () => {
      await start();
      for (let i = 0; i < 10; i += 1) expectError(await send(host, { nonsense: true }), 400);
      expectLimited(await send(host, { nonsense: true }), perKeyText);
      expectLimited(await send(host, null, { raw: '{not json' }), perKeyText);
      expectLimited(await send(host, plainBody({ user_emails: ['nobody@acme.test'] })), perKeyText);
    });

    it('limits each key on its own: bob and gina are unaffected by alice', async () => {
      await start();
      await sendOk(10, host.keys.alice);
      expectLimited(await send(host, plainBody()), perKeyText);
      await sendOk(10, host.keys.bob);
      expectLimited(await send(host, plainBody(), { key: host.keys.bob }), perKeyText);
      for (let i = 0; i < 10; i += 1) {
        expectOk(await send(host, plainBody({ user_emails: ['gina@globex.test'] }), { key: host.keys.gina }));
      }
    });

    it('quotes configured numbers', async () => {
      await start({ rateLimits: { perKey: { burst: 3, perSecond: 1 } } });
      await sendOk(3, host.keys.alice);
      expectLimited(await send(host, plainBody()), 'Per-key rate limit exceeded (3 burst / 1 per second)');
      host.clock.advance(999);
      expectLimited(await send(host, plainBody()), 'Per-key rate limit exceeded (3 burst / 1 per second)');
      host.clock.advance(1);
      expectOk(await send(host, plainBody()));
    });
  });

  describe('per organization: 50 burst / 5 per second', () => {
    /** Five more acme keys, so that 6 keys × ≤10 requests can reach the organization's burst. */
    const acmeKeys = async () => {
      const keys: string[] = [host.keys.alice, host.keys.bob];
      for (const email of ['user01@acme.test', 'user02@acme.test', 'user03@acme.test', 'user04@acme.test']) {
        keys.push((await createKey(host, email)).apiKey);
      }
      return keys;
    };

    it('accepts 50 requests of the organization and refuses the 51st with the exact text', async () => {
      await start();
      const keys = await acmeKeys();
      for (const key of keys.slice(0, 5)) await sendOk(10, key);
      const sixth = keys[5]!;
      expectLimited(await send(host, plainBody(), { key: sixth }), perOrgText);
      expectLimited(await readStatus(host, `req_${'A'.repeat(24)}`, sixth), perOrgText);
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(50);
      // Another organization is not affected.
      expectOk(await send(host, plainBody({ user_emails: ['gina@globex.test'] }), { key: host.keys.gina }));
    });

    it('refills 5 per second: 200 ms later exactly one more request passes', async () => {
      await start();
      const keys = await acmeKeys();
      for (const key of keys.slice(0, 5)) await sendOk(10, key);
      const sixth = keys[5]!;
      expectLimited(await send(host, plainBody(), { key: sixth }), perOrgText);
      host.clock.advance(199);
      expectLimited(await send(host, plainBody(), { key: sixth }), perOrgText);
      host.clock.advance(1);
      expectOk(await send(host, plainBody(), { key: sixth }));
      expectLimited(await send(host, plainBody(), { key: sixth }), perOrgText);
    });

    it('a request refused by the per-key limit consumes nothing from the organization', async () => {
      await start();
      const keys = await acmeKeys();
      await sendOk(10, host.keys.alice);
      // 30 refusals of alice's key must leave the organization's 40 remaining tokens untouched.
      for (let i = 0; i < 30; i += 1) expectLimited(await send(host, plainBody()), perKeyText);
      for (const key of keys.slice(1, 5)) await sendOk(10, key);
      expectLimited(await send(host, plainBody(), { key: keys[5]! }), perOrgText);
    });

    it('a request refused by the organization limit consumes nothing from the key', async () => {
      await start();
      const keys = await acmeKeys();
      const sixth = keys[5]!;
      await sendOk(9, sixth); // one token left on this key
      for (const key of keys.slice(0, 4)) await sendOk(10, key);
      await sendOk(1, keys[4]!); // the organization's 50th
      for (let i = 0; i < 5; i += 1) expectLimited(await send(host, plainBody(), { key: sixth }), perOrgText);
      // 200 ms refill one organization token; the key still holds its last one (plus 0.4).
      host.clock.advance(200);
      expectOk(await send(host, plainBody(), { key: sixth }));
    });

    it('quotes configured numbers', async () => {
      await start({ rateLimits: { perOrganization: { burst: 4, perSecond: 2 } } });
      await sendOk(2, host.keys.alice);
      await sendOk(2, host.keys.bob);
      expectLimited(
        await send(host, plainBody()),
        'Per-organization rate limit exceeded (4 burst / 2 per second)',
      );
      host.clock.advance(500);
      expectOk(await send(host, plainBody(), { key: host.keys.bob }));
    });
  });

  describe('failed authentication is limited per client address (docs/behaviour.md#rate-limits)', () => {
    it('refuses further attempts with 429 after a burst of failures, and recovers with time', async () => {
      await start();
      const statuses: number[] = [];
      let limited: Answer | undefined;
      for (let i = 0; i < 100 && !limited; i += 1) {
        const answer = await send(host, plainBody(), { key: `cnk_guess_${i}_000000000000000000000000000` });
        statuses.push(answer.status);
        if (answer.status === 429) limited = answer;
        else expectError(answer, 401, 'Invalid API key');
      }
      expect(limited, 'no 429 after 100 failed authentications').toBeDefined();
      expectError(limited!, 429);
      expect(limited!.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      // A burst of honest typos is still told that the key is invalid.
      expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
      // While the address is blocked, requests without a key and status reads are refused too.
      expectError(await send(host, plainBody(), { key: null }), 429);
      expectError(await readStatus(host, `req_${'A'.repeat(24)}`, 'guess'), 429);
      // After a long pause, attempts are answered again.
      host.clock.advance(10 * 60_000);
      expectError(await send(host, plainBody(), { key: 'guess-again' }), 401, 'Invalid API key');
    });

    it('does not count successful authentications', async () => {
      await start({
        rateLimits: {
          perKey: { burst: 1000, perSecond: 1000 },
          perOrganization: { burst: 1000, perSecond: 1000 },
        },
      });
      for (let i = 0; i < 60; i += 1) expectOk(await send(host, interactiveBody()));
      expectError(await send(host, plainBody(), { key: 'wrong' }), 401, 'Invalid API key');
    });
  });
});

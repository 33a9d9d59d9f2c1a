import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { capturingLogger } from '../support/capturing-logger.js';
import {
  type Answer,
  expectError,
  expectOk,
  generousLimits,
  inbox,
  interactiveBody,
  notificationIdPattern,
  plainBody,
  requestIdPattern,
  send,
  statusOf,
} from './client.js';
import { type CustomApp, gate, heldDeliveries, startCustomApp } from './custom-app.js';
import { hostKinds, startTestHost, type TestHost, type TestHostOptions } from './harness.js';

const day = 24 * 60 * 60 * 1000;

/** A fresh (not replayed) answer. */
function expectFresh(answer: Answer): Record<string, unknown> {
  const body = expectOk(answer);
  expect(answer.headers.get('idempotent-replayed')).toBeNull();
  return body;
}

/** A replay of `original`: same status, same bytes, `Idempotent-Replayed: true`. */
function expectReplay(answer: Answer, original: Answer): void {
  expect(answer.status).toBe(original.status);
  expect(answer.text).toBe(original.text);
  expect(answer.headers.get('idempotent-replayed')).toBe('true');
  expect(answer.headers.get('content-type')).toMatch(/^application\/json\b/);
}

describe.each(hostKinds)('Idempotency-Key (%s)', (kind) => {
  let host: TestHost;
  const start = async (options: TestHostOptions = {}) => {
    host = await startTestHost(kind, options);
    return host;
  };
  afterEach(async () => {
    await host.close();
  });

  describe('replay', () => {
    it('replays a fire-and-forget answer byte for byte, without a second message', async () => {
      await start();
      const first = await send(host, plainBody(), { idempotencyKey: 'deploy-1' });
      const body = expectFresh(first);
      expect(body.notification_id).toMatch(notificationIdPattern);
      const again = await send(host, plainBody(), { idempotencyKey: 'deploy-1' });
      expectReplay(again, first);
      expectReplay(await send(host, plainBody(), { idempotencyKey: 'deploy-1' }), first);
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(1);
    });

    it('replays an interactive answer with the same request_id, without a second message', async () => {
      await start();
      const body = interactiveBody({ user_emails: ['alice@acme.test', 'bob@acme.test'] });
      const first = await send(host, body, { idempotencyKey: 'approve-42' });
      const { request_id } = expectFresh(first);
      expect(request_id).toMatch(requestIdPattern);
      expectReplay(await send(host, body, { idempotencyKey: 'approve-42' }), first);
      expect(await inbox(host, 'alice@acme.test')).toHaveLength(1);
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(1);
      expect((await statusOf(host, request_id as string)).responses).toHaveLength(2);
    });

    it('treats different keys as different sends', async () => {
      await start();
      const first = expectFresh(await send(host, plainBody(), { idempotencyKey: 'a' }));
      const second = expectFresh(await send(host, plainBody(), { idempotencyKey: 'b' }));
      expect(first.notification_id).not.toBe(second.notification_id);
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(2);
    });

    it('is case-sensitive in the key', async () => {
      await start();
      expectFresh(await send(host, plainBody(), { idempotencyKey: 'Key' }));
      expectFresh(await send(host, plainBody(), { idempotencyKey: 'key' }));
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(2);
    });

    it('scopes keys per organization, not per API key: bob replays alice’s send', async () => {
      await start();
      const first = await send(host, plainBody(), { idempotencyKey: 'shared' });
      expectFresh(first);
      expectReplay(await send(host, plainBody(), { idempotencyKey: 'shared', key: host.keys.bob }), first);
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(1);
    });

    it('lets another organization use the same key string without conflict', async () => {
      await start();
      const alice = await send(host, plainBody(), { idempotencyKey: 'same-key' });
      expectFresh(alice);
      const gina = await send(host, plainBody({ user_emails: ['gina@globex.test'] }), {
        idempotencyKey: 'same-key',
        key: host.keys.gina,
      });
      const ginaBody = expectFresh(gina);
      expect(ginaBody.notification_id).not.toBe((alice.json as Record<string, unknown>).notification_id);
      expect(await inbox(host, 'gina@globex.test')).toHaveLength(1);
      // Each organization's record replays its own answer.
      expectReplay(
        await send(host, plainBody({ user_emails: ['gina@globex.test'] }), {
          idempotencyKey: 'same-key',
          key: host.keys.gina,
        }),
        gina,
      );
      expectReplay(await send(host, plainBody(), { idempotencyKey: 'same-key' }), alice);
    });

    it('stores and replays a 422 for unknown recipients', async () => {
      await start();
      const body = plainBody({ user_emails: ['nobody@acme.test'] });
      const first = await send(host, body, { idempotencyKey: 'unknown' });
      expectError(first, 422, 'Unknown user emails: nobody@acme.test');
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      const again = await send(host, body, { idempotencyKey: 'unknown' });
      expectReplay(again, first);
    });
  });

  describe('conflicts', () => {
    it('refuses the same key with a different body with 422, sending nothing', async () => {
      await start();
      expectFresh(await send(host, plainBody({ message: 'one' }), { idempotencyKey: 'k' }));
      const answer = await send(host, plainBody({ message: 'two' }), { idempotencyKey: 'k' });
      expectError(answer, 422, /body/i);
      expect(answer.headers.get('idempotent-replayed')).toBeNull();
      expectError(await send(host, interactiveBody(), { idempotencyKey: 'k' }), 422, /body/i);
      const messages = await inbox(host, 'bob@acme.test');
      expect(messages.map((m) => m.text)).toEqual(['one']);
    });

    it('refuses concurrent duplicates: exactly one is processed, the others get 409 or the replay', async () => {
      await start({ rateLimits: generousLimits });
      const body = plainBody({ user_emails: ['alice@acme.test', 'bob@acme.test', 'dave@acme.test'] });
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => send(host, body, { idempotencyKey: 'concurrent' })),
      );
      const fresh = answers.filter((a) => a.status === 200 && a.headers.get('idempotent-replayed') === null);
      expect(fresh).toHaveLength(1);
      for (const answer of answers) {
        if (answer === fresh[0]) continue;
        if (answer.status === 409) {
          expectError(answer, 409);
          expect(answer.headers.get('retry-after')).toBe('1');
        } else {
          expectReplay(answer, fresh[0]!);
        }
      }
      for (const email of ['alice@acme.test', 'bob@acme.test', 'dave@acme.test']) {
        expect(await inbox(host, email)).toHaveLength(1);
      }
    });
  });

  describe('what is not stored (docs/behaviour.md#idempotency: 400, 401, 413, 429)', () => {
    it('does not store a 400: the same key then succeeds with a valid body', async () => {
      await start();
      expectError(await send(host, { message: 'no recipients' }, { idempotencyKey: 'k400' }), 400);
      expectError(await send(host, null, { raw: '{oops', idempotencyKey: 'k400' }), 400);
      const ok = await send(host, plainBody(), { idempotencyKey: 'k400' });
      expectFresh(ok);
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(1);
    });

    it('does not store a refused callback address (422): the key stays unused, for this body or another', async () => {
      // The harness delivers no callbacks, so every callback_url is refused before idempotency.
      await start();
      const withCallback = interactiveBody({}, { callback_url: 'https://hooks.example.com/done' });
      expectError(await send(host, withCallback, { idempotencyKey: 'k422-callback' }), 422);
      expectError(await send(host, withCallback, { idempotencyKey: 'k422-callback' }), 422);
      const ok = await send(host, plainBody(), { idempotencyKey: 'k422-callback' });
      expectFresh(ok);
      expectReplay(await send(host, plainBody(), { idempotencyKey: 'k422-callback' }), ok);
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(1);
    });

    it('does not store a 401', async () => {
      await start();
      expectError(await send(host, plainBody(), { key: null, idempotencyKey: 'k401' }), 401);
      expectError(await send(host, plainBody(), { key: 'wrong', idempotencyKey: 'k401' }), 401);
      expectFresh(await send(host, plainBody(), { idempotencyKey: 'k401' }));
    });

    it('does not store a 413', async () => {
      await start();
      const raw = JSON.stringify(plainBody({ message: 'x'.repeat(70_000) }));
      expectError(await send(host, null, { raw, idempotencyKey: 'k413' }), 413);
      expectFresh(await send(host, plainBody(), { idempotencyKey: 'k413' }));
    });

    it('does not store a 429: the same request passes once the bucket refills', async () => {
      await start();
      for (let i = 0; i < 10; i += 1) expectOk(await send(host, plainBody({ message: `m${i}` })));
      const limited = await send(host, plainBody(), { idempotencyKey: 'k429' });
      expectError(limited, 429);
      host.clock.advance(5_000);
      expectFresh(await send(host, plainBody(), { idempotencyKey: 'k429' }));
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(11);
    });

    it('checks the rate limit and the body before replaying (docs/behaviour.md#idempotency order)', async () => {
      await start();
      const first = await send(host, plainBody(), { idempotencyKey: 'order' });
      expectFresh(first);
      // An invalid body with a used key is a 400, not a replay nor a 422 mismatch.
      expectError(await send(host, { message: 'x' }, { idempotencyKey: 'order' }), 400);
      // An invalid key is a 401.
      expectError(await send(host, plainBody(), { key: 'wrong', idempotencyKey: 'order' }), 401);
      for (let i = 0; i < 8; i += 1) expectOk(await send(host, plainBody({ message: `m${i}` })));
      // The key's bucket is empty now: a repeat is limited, not replayed.
      expectError(await send(host, plainBody(), { idempotencyKey: 'order' }), 429);
      host.clock.advance(1_000);
      expectReplay(await send(host, plainBody(), { idempotencyKey: 'order' }), first);
    });
  });

  describe('malformed keys → 400 (1 to 255 printable ASCII characters)', () => {
    it('accepts 255 printable characters, including spaces inside and symbols', async () => {
      await start();
      const key = `a b~!${'x'.repeat(250)}`;
      expect(key).toHaveLength(255);
      const first = await send(host, plainBody(), { idempotencyKey: key });
      expectFresh(first);
      expectReplay(await send(host, plainBody(), { idempotencyKey: key }), first);
    });

    it('accepts a single character', async () => {
      await start();
      expectFresh(await send(host, plainBody(), { idempotencyKey: '1' }));
    });

    it.each([
      ['256 characters', 'k'.repeat(256)],
      ['a non-ASCII character', 'clé'],
      ['a tab inside', 'a\tb'],
      ['empty', ''],
    ])('refuses %s with 400, sending nothing', async (_name, key) => {
      await start();
      expectError(await send(host, plainBody(), { idempotencyKey: key }), 400, /idempotency/i);
      expect(await inbox(host, 'bob@acme.test')).toEqual([]);
    });
  });

  describe('an interactive send refused after its admission, which stores a request only when nothing but delivery can refuse it', () => {
    it.each([
      ['a malformed Idempotency-Key', interactiveBody(), 'clé', 400],
      [
        'an unknown recipient',
        interactiveBody({ user_emails: ['bob@acme.test', 'nobody@acme.test'] }),
        undefined,
        422,
      ],
      [
        'an unknown recipient, with a key',
        interactiveBody({ user_emails: ['nobody@acme.test'] }),
        'k-unknown',
        422,
      ],
      [
        'a refused callback address',
        interactiveBody({}, { callback_url: 'https://hooks.example.com/done' }),
        undefined,
        422,
      ],
    ] as const)(
      'stores no request for %s: no timeout is scheduled, nothing is delivered',
      async (_name, body, key, status) => {
        await start();
        expectError(await send(host, body, key === undefined ? {} : { idempotencyKey: key }), status);
        expect(await host.storage.dueWork.nextRunAt()).toBeNull();
        expect(await inbox(host, 'bob@acme.test')).toEqual([]);
      },
    );

    it("stores the request of an accepted send once, in the admission's step, whether or not it carries a key", async () => {
      // The request store as the core sees it: a create through it would be a storage step of its
      // own; the admission's insert goes to the store behind it.
      const storage = memoryStorage();
      const creates: string[] = [];
      const requests = {
        ...storage.requests,
        createRequest: (...args: Parameters<typeof storage.requests.createRequest>) => {
          creates.push(args[0].id);
          return storage.requests.createRequest(...args);
        },
      };
      await start({ storage: { ...storage, requests } });
      const id = expectFresh(await send(host, interactiveBody())).request_id as string;
      const keyed = expectFresh(await send(host, interactiveBody(), { idempotencyKey: 'k-once' }))
        .request_id as string;
      expect(await host.storage.requests.getRequest(id)).toMatchObject({ id, version: 0, status: 'pending' });
      expect(await host.storage.requests.getRequest(keyed)).toMatchObject({ id: keyed, version: 0 });
      const due = await host.storage.dueWork.claim(Number.MAX_SAFE_INTEGER, 10, 1000);
      expect(due.map((item) => item.requestId).sort()).toEqual([id, keyed].sort());
      expect(creates).toEqual([]);
    });
  });

  describe('expiry after 24 hours', () => {
    it('replays until 24 h, and processes anew after 24 h + 1 ms', async () => {
      await start();
      const first = await send(host, plainBody(), { idempotencyKey: 'daily' });
      const firstBody = expectFresh(first);
      host.clock.advance(day - 1);
      expectReplay(await send(host, plainBody(), { idempotencyKey: 'daily' }), first);
      host.clock.advance(2);
      const later = await send(host, plainBody(), { idempotencyKey: 'daily' });
      const laterBody = expectFresh(later);
      expect(laterBody.notification_id).toMatch(notificationIdPattern);
      expect(laterBody.notification_id).not.toBe(firstBody.notification_id);
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(2);
      // The new answer is stored in turn.
      expectReplay(await send(host, plainBody(), { idempotencyKey: 'daily' }), later);
    });

    it('forgets the body too: an expired key may be reused with another body', async () => {
      await start();
      expectFresh(await send(host, plainBody({ message: 'one' }), { idempotencyKey: 'reuse' }));
      host.clock.advance(day + 1);
      expectFresh(await send(host, plainBody({ message: 'two' }), { idempotencyKey: 'reuse' }));
      expect((await inbox(host, 'bob@acme.test')).map((m) => m.text)).toEqual(['one', 'two']);
    });
  });

  describe('failed sends are resumed (docs/behaviour.md#idempotency)', () => {
    it('fire-and-forget: 500 naming bob, then the retry reaches only bob, then replays', async () => {
      await start();
      const body = plainBody({ user_emails: ['alice@acme.test', 'bob@acme.test'] });
      host.inbox.failNext('bob@acme.test', 1);
      const failed = await send(host, body, { idempotencyKey: 'partial' });
      const details = expectError(failed, 500);
      expect(details).toContain('bob@acme.test');
      expect(details).not.toContain('alice');
      expect(await inbox(host, 'alice@acme.test')).toHaveLength(1);
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(0);

      const retried = await send(host, body, { idempotencyKey: 'partial' });
      const retriedBody = expectFresh(retried);
      expect(retriedBody.notification_id).toMatch(notificationIdPattern);
      expect(await inbox(host, 'alice@acme.test')).toHaveLength(1);
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(1);

      expectReplay(await send(host, body, { idempotencyKey: 'partial' }), retried);
      expect(await inbox(host, 'alice@acme.test')).toHaveLength(1);
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(1);
    });

    it('answers without waiting for its record; a lost record keeps the key busy for the lease, then a repeat resumes', async () => {
      // The store stands for one whose write of the answer is lost (a connection dropped after the send).
      const storage = memoryStorage();
      const lost = {
        ...storage,
        idempotency: { ...storage.idempotency, complete: () => Promise.reject(new Error('connection lost')) },
      };
      const logger = capturingLogger();
      await start({ storage: lost, logger });
      const body = plainBody({ user_emails: ['alice@acme.test', 'bob@acme.test'] });
      const first = expectFresh(await send(host, body, { idempotencyKey: 'lost-answer' }));
      expect(logger.entries).toContainEqual(
        expect.objectContaining({ level: 'warn', message: expect.stringContaining('Idempotency-Key') }),
      );
      expectError(await send(host, body, { idempotencyKey: 'lost-answer' }), 409);
      host.clock.advance(60_001);
      const resumed = expectFresh(await send(host, body, { idempotencyKey: 'lost-answer' }));
      expect(resumed).toEqual(first);
      expect(await inbox(host, 'alice@acme.test')).toHaveLength(1);
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(1);
    });

    it('keeps failing while the recipient stays unreachable, never notifying anyone twice', async () => {
      await start();
      const body = plainBody({ user_emails: ['alice@acme.test', 'bob@acme.test', 'dave@acme.test'] });
      host.inbox.failNext('bob@acme.test', 2);
      host.inbox.failNext('dave@acme.test', 1);
      const first = expectError(await send(host, body, { idempotencyKey: 'flaky' }), 500);
      expect(first).toContain('bob@acme.test');
      expect(first).toContain('dave@acme.test');
      const second = expectError(await send(host, body, { idempotencyKey: 'flaky' }), 500);
      expect(second).toContain('bob@acme.test');
      expect(second).not.toContain('dave');
      expectFresh(await send(host, body, { idempotencyKey: 'flaky' }));
      for (const email of ['alice@acme.test', 'bob@acme.test', 'dave@acme.test']) {
        expect(await inbox(host, email)).toHaveLength(1);
      }
    });

    it('interactive: the retry reaches only bob, under the same request', async () => {
      await start();
      const body = interactiveBody({ user_emails: ['alice@acme.test', 'bob@acme.test'] });
      host.inbox.failNext('bob@acme.test', 1);
      expectError(await send(host, body, { idempotencyKey: 'partial-i' }), 500, /bob@acme\.test/);
      const retried = await send(host, body, { idempotencyKey: 'partial-i' });
      const { request_id } = expectFresh(retried);
      expect(request_id).toMatch(requestIdPattern);
      expect(await inbox(host, 'alice@acme.test')).toHaveLength(1);
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(1);
      const status = await statusOf(host, request_id as string);
      expect(status.responses.map((r) => r.user_email)).toEqual(['alice@acme.test', 'bob@acme.test']);
      expectReplay(await send(host, body, { idempotencyKey: 'partial-i' }), retried);
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(1);
    });
  });
});

describe.each(hostKinds)('Idempotency-Key while the first request runs (%s)', (kind) => {
  let app: CustomApp;
  afterEach(async () => {
    await app.close();
  });

  it('answers 409 with Retry-After: 1 to a repeat, then replays once the first completes', async () => {
    const held = gate();
    let entered = () => {};
    const deliveryStarted = new Promise<void>((resolve) => {
      entered = resolve;
    });
    app = await startCustomApp(kind, { wrapTransport: heldDeliveries(held.promise, { started: entered }) });

    const firstPromise = send(app, plainBody(), { idempotencyKey: 'slow' });
    await deliveryStarted;
    const concurrent = await send(app, plainBody(), { idempotencyKey: 'slow' });
    expectError(concurrent, 409);
    expect(concurrent.headers.get('retry-after')).toBe('1');

    held.open();
    const first = await firstPromise;
    expectFresh(first);
    expectReplay(await send(app, plainBody(), { idempotencyKey: 'slow' }), first);
    expect(await inbox(app, 'bob@acme.test')).toHaveLength(1);
  });
});

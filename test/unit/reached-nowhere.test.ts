import { afterEach, describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { type ChatTransport, RecipientGoneError } from '../../core/adapter-kit.js';
import { createNotifier, type Notifier } from '../../core/notifier.js';
import { inboxOf, interactiveBody, plainBody, post } from '../support/api-requests.js';
import { memoryAndRedisStorages } from '../support/redis.js';
import { testSeed } from '../support/test-seed.js';

/**
 * The inbox, with recipients its address look-up says it does not reach, or says are gone, or fails
 * for (a platform briefly down): it stands in for Slack or Teams, where a user may have no account,
 * whose outages and missing users cannot be produced here.
 */
function choosyInbox() {
  const inner = inboxTransport();
  const missing = new Set<string>();
  const gone = new Set<string>();
  const failing = new Set<string>();
  const transport: ChatTransport = {
    platform: inner.platform,
    routes: inner.routes,
    connect: (sink) => inner.connect(sink),
    update: (update, ref) => inner.update(update, ref),
    deliver: (delivery) => inner.deliver(delivery),
    async address(user, organization) {
      const email = user.email.toLowerCase();
      if (failing.has(email)) throw new Error('the platform is briefly down');
      if (gone.has(email)) throw new RecipientGoneError(`${email} left`);
      if (missing.has(email)) return null;
      return inner.address(user, organization);
    },
  };
  return { transport, missing, gone, failing };
}

const recipients = ['alice@acme.test', 'carol@acme.test', 'dave@acme.test'];

const storages = await memoryAndRedisStorages('sends to recipients no platform reaches');

describe.each(storages)('a send to a recipient no platform reaches, on %s', (_name, makeStorage) => {
  let notifier: Notifier | undefined;
  afterEach(async () => {
    await notifier?.stop();
  });

  async function start() {
    const platform = choosyInbox();
    const storage = makeStorage();
    notifier = createNotifier({ storage, transports: [platform.transport] });
    await notifier.seed(testSeed);
    return { notifier, storage, ...platform };
  }

  const counts = async (target: Notifier) =>
    Promise.all(recipients.map(async (email) => (await inboxOf(target, email)).length));

  it.each([
    ['answers it does not reach them', 'missing'],
    ['says the account is gone', 'gone'],
  ] as const)('sends nothing to anyone when the platform %s, and says so', async (_what, how) => {
    const world = await start();
    world[how].add('carol@acme.test');
    for (const body of [plainBody(recipients), interactiveBody(recipients)]) {
      const answer = await post(world.notifier, body);
      expect(answer?.status).toBe(500);
      expect(JSON.parse(answer?.body ?? '{}')).toEqual({
        status: 'error',
        details:
          'Delivery failed for: carol@acme.test (no chat platform reaches them; nothing was sent to anyone)',
      });
    }
    expect(await counts(world.notifier)).toEqual([0, 0, 0]);
  });

  it('withdraws the interactive request nothing was sent of, and stores it again for a repeat once everyone is reached', async () => {
    const world = await start();
    world.missing.add('carol@acme.test');
    const body = interactiveBody(recipients);
    const key = { 'idempotency-key': 'new-hire' };
    expect((await post(world.notifier, body, key))?.status).toBe(500);
    // No timeout waits, and so no callback: the request's id was never answered.
    expect(await world.storage.dueWork.nextRunAt()).toBeNull();
    world.missing.clear();
    const sent = await post(world.notifier, body, key);
    expect(sent?.status).toBe(200);
    const { request_id: requestId } = JSON.parse(sent?.body ?? '{}') as { request_id: string };
    expect(await world.storage.requests.getRequest(requestId)).toMatchObject({ status: 'pending' });
    expect(await world.storage.dueWork.nextRunAt()).not.toBeNull();
    expect(await counts(world.notifier)).toEqual([1, 1, 1]);
  });

  it('says so of a send to that recipient alone too', async () => {
    const world = await start();
    world.missing.add('carol@acme.test');
    const answer = await post(world.notifier, plainBody(['carol@acme.test']));
    expect(JSON.parse(answer?.body ?? '{}').details).toBe(
      'Delivery failed for: carol@acme.test (no chat platform reaches them; nothing was sent to anyone)',
    );
  });

  it('still sends to the others while a look-up fails, as a retry with the key may reach the rest', async () => {
    const world = await start();
    world.failing.add('carol@acme.test');
    const answer = await post(world.notifier, plainBody(recipients));
    expect(JSON.parse(answer?.body ?? '{}').details).toBe('Delivery failed for: carol@acme.test');
    expect(await counts(world.notifier)).toEqual([1, 0, 1]);
  });

  it.each(['plain', 'interactive'] as const)(
    'resumes a %s send an earlier attempt delivered some of: the rest are reached, the unreachable one named alone',
    async (kind) => {
      const world = await start();
      const body = kind === 'plain' ? plainBody(recipients) : interactiveBody(recipients);
      const key = { 'idempotency-key': `resumed-${kind}` };
      world.failing.add('carol@acme.test');
      world.failing.add('dave@acme.test');
      expect((await post(world.notifier, body, key))?.status).toBe(500);
      expect(await counts(world.notifier)).toEqual([1, 0, 0]);
      // Carol left the platform meanwhile; dave's is back.
      world.failing.clear();
      world.missing.add('carol@acme.test');
      const resumed = await post(world.notifier, body, key);
      expect(JSON.parse(resumed?.body ?? '{}').details).toBe('Delivery failed for: carol@acme.test');
      expect(await counts(world.notifier)).toEqual([1, 0, 1]);
    },
  );
});

describe('a repeat of a send to a recipient no platform reaches, the moment its request was withdrawn', () => {
  it('brings the withdrawn request back to pending, its timeout scheduled, rather than resume it finished', async () => {
    // The store's clock stands still: the withdrawn request, which expires a millisecond after its
    // withdrawal, is still there when the repeat reads it.
    const clock = { now: () => Date.UTC(2030, 0, 1) };
    const storage = memoryStorage({ clock });
    const platform = choosyInbox();
    const target = createNotifier({ storage, transports: [platform.transport], clock });
    await target.seed(testSeed);
    try {
      platform.missing.add('carol@acme.test');
      const body = interactiveBody(recipients);
      const key = { 'idempotency-key': 'withdrawn-a-moment-ago' };
      expect((await post(target, body, key))?.status).toBe(500);
      platform.missing.clear();
      const sent = await post(target, body, key);
      expect(sent?.status).toBe(200);
      const { request_id: requestId } = JSON.parse(sent?.body ?? '{}') as { request_id: string };
      // Created (0), withdrawn (1), brought back (2).
      expect(await storage.requests.getRequest(requestId)).toMatchObject({
        version: 2,
        status: 'pending',
        finishedAt: null,
      });
      expect(await storage.dueWork.nextRunAt()).not.toBeNull();
      expect(
        await Promise.all(recipients.map(async (email) => (await inboxOf(target, email)).length)),
      ).toEqual([1, 1, 1]);
    } finally {
      await target.stop();
    }
  });
});

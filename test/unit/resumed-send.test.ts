import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { timeoutItemId } from '../../core/domain/due-work.js';
import { createNotifier } from '../../core/notifier.js';
import { randomIds } from '../../core/security/random-id.js';
import { inboxOf, interactiveBody, post, readStatus } from '../support/api-requests.js';
import { flakyTransport } from '../support/flaky-transport.js';
import { memoryAndRedisStorages } from '../support/redis.js';
import { testSeed } from '../support/test-seed.js';

const storages = await memoryAndRedisStorages('a resumed send');

const alice = 'alice@acme.test';
const bob = 'bob@acme.test';
const requestId = 'req_resumedresumedresumed000';

/**
 * A send to alice and bob with the key `key` whose first attempt reached alice only (bob's copy
 * failed: the send answered 500), under the known id `requestId`: a retry draws a fresh id, which
 * its key's record replaces. Answers the storage, the notifier and the send's body.
 */
async function partlySent(key: Record<string, string>) {
  const storage = memoryStorage();
  let drawn = 0;
  const inbox = flakyTransport(inboxTransport());
  const notifier = createNotifier({
    storage,
    transports: [inbox],
    ids: { ...randomIds, requestId: () => (drawn++ === 0 ? requestId : randomIds.requestId()) },
  });
  await notifier.seed(testSeed);
  const body = interactiveBody([alice, bob]);
  inbox.failNext(bob, 1);
  expect((await post(notifier, body, key))?.status).toBe(500);
  const request = await storage.requests.getRequest(requestId);
  if (!request) throw new Error('the first attempt stored no request');
  return { storage, notifier, body, request };
}

describe('a resumed interactive send', () => {
  it('brings the copies an earlier attempt delivered up to the request as it stands now', async () => {
    const key = { 'idempotency-key': 'resumed-send' };
    const { storage, notifier, body, request } = await partlySent(key);
    const aliceSees = () => inboxOf(notifier, alice);
    // Alice's answer is stored, but the update of her copy never happens: the attempt that
    // delivered it stopped (a crash) before it could tell her copy was behind.
    const answered = {
      ...request,
      version: request.version + 1,
      recipients: request.recipients.map((recipient) =>
        recipient.key === alice ? { ...recipient, value: 'yes', respondedAt: request.createdAt } : recipient,
      ),
    };
    expect(await storage.requests.updateRequest(answered, request.version, { enqueue: [], cancel: [] })).toBe(
      true,
    );
    expect((await aliceSees()).map((message) => message.selected)).toEqual([null]);

    const retried = await post(notifier, body, key);
    expect(retried?.status).toBe(200);
    expect(JSON.parse(retried?.body ?? '{}')).toMatchObject({ request_id: requestId });
    expect((await aliceSees()).map((message) => message.selected)).toEqual(['yes']);
    await notifier.stop();
  });
});

describe('a send resumed after its timeout finished its request before its deadline (a clock set back)', () => {
  it('leaves the request finished: only a withdrawal, which expires nobody, is brought back', async () => {
    const key = { 'idempotency-key': 'resumed-after-early-timeout' };
    const { storage, notifier, body, request } = await partlySent(key);
    // The timeout finished it, with a finish time before its deadline: the clock was set back
    // between the claim of the timeout and its run.
    const timedOut = {
      ...request,
      version: request.version + 1,
      status: 'finished' as const,
      finishedAt: request.expiresAt - 1_000,
      recipients: request.recipients.map((recipient) => ({ ...recipient, expired: true })),
    };
    expect(
      await storage.requests.updateRequest(timedOut, request.version, {
        enqueue: [],
        cancel: [timeoutItemId(requestId)],
      }),
    ).toBe(true);

    expect((await post(notifier, body, key))?.status).toBe(200);
    expect(await storage.requests.getRequest(requestId)).toMatchObject({
      version: timedOut.version,
      status: 'finished',
    });
    expect(await storage.dueWork.nextRunAt()).toBeNull();
    // Bob's copy goes out at last, as the finished request shows it: no button to press.
    const copies = await inboxOf(notifier, bob);
    expect(copies.map((copy) => copy.buttons.every((button) => button.disabled))).toEqual([true]);
    await notifier.stop();
  });
});

describe.each(storages)('a send resumed after its request finished, on %s', (_name, make) => {
  // Redis expires keys by its own clock: the retention is short and real, and the notifier's clock
  // runs with the real one, moved on past the timeout.
  const retention = 1_500;

  it('adds the missing copy without restarting the retention, which runs from the finish', async () => {
    let skipped = 0;
    const clock = { now: () => Date.now() + skipped };
    const inbox = flakyTransport(inboxTransport({ clock }));
    const notifier = createNotifier({ storage: make(), transports: [inbox], clock, retention });
    await notifier.seed(testSeed);
    const body = interactiveBody([alice, bob], 1);
    const key = { 'idempotency-key': 'resumed-after-finish' };

    inbox.failNext(bob, 1);
    expect((await post(notifier, body, key))?.status).toBe(500);
    skipped += 61_000;
    expect(await notifier.runDueWork()).toBe(1);
    const finished = Date.now();

    await sleep(retention / 2);
    const retried = await post(notifier, body, key);
    expect(retried?.status).toBe(200);
    const { request_id: id } = JSON.parse(retried?.body ?? '{}') as { request_id: string };
    // Bob's copy goes out at last, as the finished request shows it: no button to press.
    const copies = await inboxOf(notifier, bob);
    expect(copies.map((copy) => copy.buttons.every((button) => button.disabled))).toEqual([true]);
    expect((await readStatus(notifier, id))?.status).toBe(200);

    // The store's clock may run a little apart from this one: a moment's margin past the end.
    await sleep(finished + retention + 250 - Date.now());
    expect((await readStatus(notifier, id))?.status).toBe(404);
    await notifier.stop();
  });
});

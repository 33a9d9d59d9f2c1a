import { afterEach, describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { createNotifier, type Notifier } from '../../core/notifier.js';
import type { Clock } from '../../core/ports/clock.js';
import type { StoragePorts } from '../../core/ports/storage.js';
import { interactiveBody, post, readStatus } from '../support/api-requests.js';
import { memoryAndRedisStorages } from '../support/redis.js';
import { testKeys, testSeed } from '../support/test-seed.js';

const storages = await memoryAndRedisStorages('status reads past the deadline');

let notifiers: Notifier[] = [];
afterEach(async () => {
  await Promise.all(notifiers.map((notifier) => notifier.stop()));
  notifiers = [];
});

async function instance(storage: StoragePorts, clock: Clock): Promise<Notifier> {
  const notifier = createNotifier({ storage, transports: [inboxTransport({ clock })], clock });
  await notifier.seed(testSeed);
  notifiers.push(notifier);
  return notifier;
}

describe.each(storages)('a status read past the deadline, on %s', (_name, make) => {
  it('is what stays: a click made before the deadline whose write comes after the read changes nothing', async () => {
    let now = Date.UTC(2030, 0, 1);
    const clock: Clock = { now: () => now };
    const storage = make();
    // Instance A's writes of requests wait for `release` (a slow link to the store, a lost race
    // retried after a pause); instance B shares the store.
    let release = (): void => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow: StoragePorts = {
      ...storage,
      requests: {
        ...storage.requests,
        updateRequest: async (...args) => {
          await held;
          return storage.requests.updateRequest(...args);
        },
      },
    };
    const a = await instance(slow, clock);
    const b = await instance(storage, clock);
    const sent = await post(b, interactiveBody(['bob@acme.test', 'dave@acme.test'], 1));
    const { request_id: requestId } = JSON.parse(sent?.body ?? '{}') as { request_id: string };

    now += 60_000 - 10;
    const click = a.click({ requestId, recipient: 'bob@acme.test', value: 'yes' });
    now += 11;
    const first = JSON.parse((await readStatus(b, requestId))?.body ?? '{}') as {
      status: string;
      responses: { user_email: string; expired: boolean }[];
    };
    expect(first.status).toBe('finished');
    expect(first.responses.map((response) => [response.user_email, response.expired])).toEqual([
      ['bob@acme.test', true],
      ['dave@acme.test', true],
    ]);
    release();
    await click.catch(() => undefined);
    const later = JSON.parse((await readStatus(b, requestId))?.body ?? '{}') as { status: string };
    expect(later).toEqual(first);
  });

  it("stores the timeout as a click's write does: no due item left once the copies are updated", async () => {
    let now = Date.UTC(2030, 0, 1);
    const storage = make();
    const notifier = await instance(storage, { now: () => now });
    const sent = await post(notifier, interactiveBody(['bob@acme.test'], 1));
    const { request_id: requestId } = JSON.parse(sent?.body ?? '{}') as { request_id: string };
    now += 60_000;
    const read = JSON.parse((await readStatus(notifier, requestId))?.body ?? '{}') as { status: string };
    expect(read.status).toBe('finished');
    // Stopping waits for the write's commands (the copies' update); its timeout item went with the
    // write, and the refresh it pledged once the copies were updated: nothing runs ten minutes later.
    await notifier.stop();
    expect(await storage.dueWork.nextRunAt()).toBeNull();
  });

  it('refuses, retryably, once the notifier is stopping, rather than show a finish it cannot store', async () => {
    let now = Date.UTC(2030, 0, 1);
    const storage = make();
    const notifier = await instance(storage, { now: () => now });
    const principal = await notifier.authenticate(testKeys.alice);
    const sent = await post(notifier, interactiveBody(['bob@acme.test'], 1));
    const { request_id: requestId } = JSON.parse(sent?.body ?? '{}') as { request_id: string };
    await notifier.stop();
    now += 60_000;
    await expect(notifier.status(principal, requestId)).rejects.toMatchObject({
      code: 'unavailable',
      retryAfterSeconds: 1,
    });
    // Nothing was stored by the refused read: another instance's read finishes it, and shows that.
    expect((await storage.requests.getRequest(requestId))?.status).toBe('pending');
    const other = await instance(storage, { now: () => now });
    expect((await other.status(principal, requestId)).status).toBe('finished');
  });
});

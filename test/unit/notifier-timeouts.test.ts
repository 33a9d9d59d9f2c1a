import { afterAll, describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { type ClaimedDueItem, timeoutItemId } from '../../core/domain/due-work.js';
import { createNotifier } from '../../core/notifier.js';
import type { StoragePorts } from '../../core/ports/storage.js';
import { interactiveBody, post } from '../support/api-requests.js';
import { redisTestStorages, redisUrl } from '../support/redis.js';
import { testSeed } from '../support/test-seed.js';

const redis = await redisTestStorages();

afterAll(async () => {
  await redis?.release();
});

const storages: Array<[string, () => StoragePorts]> = [['memory', () => memoryStorage()]];
if (redis) storages.push(['redis', () => redis.storage()]);
else console.warn(`notifier timeouts on Redis skipped: no Redis answers at ${redisUrl}`);

const minute = 60_000;

/** A notifier on `storage` in virtual time, with every complete of due work recorded. */
async function setup(storage: StoragePorts) {
  let now = Date.UTC(2030, 0, 1);
  const clock = { now: () => now };
  const completed: string[] = [];
  const dueWork = {
    ...storage.dueWork,
    complete: async (item: ClaimedDueItem) => {
      completed.push(item.id);
      await storage.dueWork.complete(item);
    },
  };
  const notifier = createNotifier({
    storage: { ...storage, dueWork },
    transports: [inboxTransport({ clock })],
    clock,
    rateLimits: { perKey: { burst: 1e6, perSecond: 1e6 }, perOrganization: { burst: 1e6, perSecond: 1e6 } },
  });
  await notifier.seed(testSeed);
  return { notifier, storage, completed, advance: (ms: number) => (now += ms) };
}

describe.each(storages)('timeouts run by the notifier, on %s', (_name, make) => {
  it('finishes the request and leaves no due item behind, without completing the item it cancelled', async () => {
    const { notifier, storage, completed, advance } = await setup(make());
    const sent = await post(notifier, interactiveBody(['bob@acme.test', 'carol@acme.test'], 1));
    const { request_id: requestId } = JSON.parse(sent?.body ?? '{}') as { request_id: string };
    advance(minute + 1);
    expect(await notifier.runDueWork()).toBe(1);
    expect(await storage.requests.getRequest(requestId)).toMatchObject({ status: 'finished' });
    expect(completed).toEqual([]);
    expect(await storage.dueWork.nextRunAt()).toBeNull();
    // Past the lease the item would have had: nothing comes back.
    advance(10 * minute);
    expect(await notifier.runDueWork()).toBe(0);
    await notifier.stop();
  });

  it('completes the timeout of a request that is gone', async () => {
    const { notifier, storage, completed, advance } = await setup(make());
    const requestId = 'req_000000000000000000000gone';
    const item = { id: timeoutItemId(requestId), kind: 'timeout' as const, requestId, runAt: 0, attempt: 0 };
    await storage.dueWork.enqueue([item]);
    advance(minute);
    expect(await notifier.runDueWork()).toBe(1);
    expect(completed).toEqual([item.id]);
    expect(await storage.dueWork.nextRunAt()).toBeNull();
    await notifier.stop();
  });
});

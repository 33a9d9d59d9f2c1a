import { describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { type ClaimedDueItem, timeoutItemId } from '../../core/domain/due-work.js';
import { createNotifier, type Notifier } from '../../core/notifier.js';
import type { Clock } from '../../core/ports/clock.js';
import type { StoragePorts } from '../../core/ports/storage.js';
import { interactiveBody, post } from '../support/api-requests.js';
import { memoryAndRedisStorages } from '../support/redis.js';
import { testSeed } from '../support/test-seed.js';

const storages = await memoryAndRedisStorages('notifier timeouts');

const minute = 60_000;

/** A seeded notifier on `storage` delivering to the inbox, by `clock`, with limits that never refuse. */
async function seededNotifier(
  storage: StoragePorts,
  clock: Clock,
  dueWorkConcurrency?: number,
): Promise<Notifier> {
  const notifier = createNotifier({
    storage,
    transports: [inboxTransport({ clock })],
    clock,
    rateLimits: { perKey: { burst: 1e6, perSecond: 1e6 }, perOrganization: { burst: 1e6, perSecond: 1e6 } },
    ...(dueWorkConcurrency === undefined ? {} : { dueWorkConcurrency }),
  });
  await notifier.seed(testSeed);
  return notifier;
}

/** A notifier on `storage` in virtual time, with every complete of due work recorded. */
async function setup(storage: StoragePorts) {
  let now = Date.UTC(2030, 0, 1);
  const completed: string[] = [];
  const dueWork = {
    ...storage.dueWork,
    complete: async (item: ClaimedDueItem) => {
      completed.push(item.id);
      await storage.dueWork.complete(item);
    },
  };
  const notifier = await seededNotifier({ ...storage, dueWork }, { now: () => now });
  return { notifier, storage, completed, advance: (ms: number) => (now += ms) };
}

describe.each(storages)('timeouts run by the notifier, on %s', (_name, make) => {
  it('finishes the request, completes its item once the copies are updated, and leaves no due item behind', async () => {
    const { notifier, storage, completed, advance } = await setup(make());
    const sent = await post(notifier, interactiveBody(['bob@acme.test', 'carol@acme.test'], 1));
    const { request_id: requestId } = JSON.parse(sent?.body ?? '{}') as { request_id: string };
    advance(minute + 1);
    expect(await notifier.runDueWork()).toBe(1);
    expect(await storage.requests.getRequest(requestId)).toMatchObject({ status: 'finished' });
    expect(completed).toEqual([timeoutItemId(requestId)]);
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

describe('createNotifier dueWorkConcurrency', () => {
  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses %s', (dueWorkConcurrency) => {
    expect(() => createNotifier({ storage: memoryStorage(), transports: [], dueWorkConcurrency })).toThrow(
      RangeError,
    );
  });

  /** How many items each claim asked for while `due` timeouts ran, with the given setting. */
  async function claimSizes(due: number, dueWorkConcurrency?: number): Promise<number[]> {
    const storage = memoryStorage();
    const asked: number[] = [];
    const dueWork = {
      ...storage.dueWork,
      claim: (now: number, limit: number, leaseMs: number) => {
        asked.push(limit);
        return storage.dueWork.claim(now, limit, leaseMs);
      },
    };
    let now = Date.UTC(2030, 0, 1);
    const notifier = await seededNotifier({ ...storage, dueWork }, { now: () => now }, dueWorkConcurrency);
    for (let sent = 0; sent < due; sent += 1) await post(notifier, interactiveBody(['bob@acme.test'], 1));
    now += minute + 1;
    expect(await notifier.runDueWork()).toBe(due);
    await notifier.stop();
    return asked;
  }

  it('runs at most the given number of items at once', async () => {
    const asked = await claimSizes(7, 3);
    expect(asked[0]).toBe(3);
    expect(Math.max(...asked)).toBe(3);
  });

  // How the limit moves between 16 and 128 is the due-work runner's tests' to show (adaptive-limit.ts).
  it('starts with 16 at once by default', async () => {
    expect((await claimSizes(150))[0]).toBe(16);
  });
});

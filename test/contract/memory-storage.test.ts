import { describe, expect, it } from 'vitest';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import type { Clock } from '../../core/ports/clock.js';
import { describeStorageContract, describeTransportStateContract } from '../../testing/index.js';

/** A clock that moves only when told to. */
const manualClock = (start = Date.UTC(2030, 0, 1)): Clock & { advance(ms: number): void } => {
  let now = start;
  return {
    now: () => now,
    advance(ms) {
      now += ms;
    },
  };
};

describeStorageContract('memory', async () => {
  const clock = manualClock();
  return { storage: memoryStorage({ clock }), clock, teardown: async () => {} };
});

describeStorageContract('memory (system clock)', async () => ({
  storage: memoryStorage(),
  teardown: async () => {},
}));

describeTransportStateContract('memory', async () => {
  const clock = manualClock();
  return { state: memoryStorage({ clock }).transportState, clock, teardown: async () => {} };
});

describeTransportStateContract('memory (system clock)', async () => ({
  state: memoryStorage().transportState,
  teardown: async () => {},
}));

// Beyond the contract: the lazy clean-ups of the memory adapter must never forget live state.
describe('memory storage housekeeping', () => {
  const t0 = Date.UTC(2030, 0, 1);

  it('still claims in order after most of a large queue was cancelled', async () => {
    const { dueWork, requests } = memoryStorage();
    const items = Array.from({ length: 5000 }, (_, i) => ({
      id: `due-${i}`,
      kind: 'timeout' as const,
      requestId: `req-${i}`,
      runAt: t0 + ((i * 7919) % 5000),
      attempt: 0,
    }));
    await dueWork.enqueue(items);
    const kept = items.filter((_, i) => i % 500 === 0);
    const request = {
      id: 'req_x',
      organizationId: 'org_1',
      version: 0,
      status: 'pending' as const,
      message: 'm',
      options: [],
      mode: 'onTimeout' as const,
      timeoutMinutes: 1,
      createdAt: t0,
      expiresAt: t0,
      finishedAt: null,
      externalReferenceId: null,
      sender: { userId: 'u', name: 'n' },
      callback: null,
      recipients: [],
    };
    const cancel = items.filter((item) => !kept.includes(item)).map((item) => item.id);
    await requests.createRequest(request, { enqueue: [], cancel });
    const claimed = await dueWork.claim(t0 + 5000, 100, 1000);
    const expected = [...kept].sort((a, b) => a.runAt - b.runAt).map((item) => item.id);
    expect(claimed.map((c) => c.id)).toEqual(expected);
  });

  it('does not forget a drained bucket while sweeping others', async () => {
    const clock = { now: () => t0 };
    const { rateLimits } = memoryStorage({ clock });
    const drained = { key: 'drained', capacity: 1, refillPerSecond: 1 };
    expect(await rateLimits.take([drained], 1)).toBeNull();
    for (let i = 0; i < 5000; i += 1)
      await rateLimits.take([{ key: `k${i}`, capacity: 1, refillPerSecond: 1 }], 0);
    expect(await rateLimits.take([drained], 1)).toBe(0);
  });

  it('does not forget a live idempotency record while sweeping expired ones', async () => {
    const clock = manualClock(t0);
    const { idempotency } = memoryStorage({ clock });
    const timing = { now: t0, leaseMs: 60_000, ttlMs: 1000 };
    for (let i = 0; i < 3000; i += 1)
      await idempotency.acquire({ organizationId: 'o', key: `old${i}` }, 'f', 'notif_1', timing);
    clock.advance(2000);
    const live = { organizationId: 'o', key: 'live' };
    await idempotency.acquire(live, 'f', 'notif_1', { ...timing, ttlMs: 60_000 });
    for (let i = 0; i < 3000; i += 1)
      await idempotency.acquire({ organizationId: 'o', key: `new${i}` }, 'f', 'notif_1', timing);
    expect(await idempotency.acquire(live, 'f', 'notif_1', timing)).toEqual({ outcome: 'busy' });
  });

  it('does not forget live transport state while sweeping expired records and lists', async () => {
    const clock = manualClock(t0);
    const { transportState } = memoryStorage({ clock });
    for (let i = 0; i < 3000; i += 1) {
      await transportState.set(`old${i}`, 'v', { ttlMs: 1000 });
      await transportState.append(`old${i}`, 'v', { ttlMs: 1000 });
    }
    clock.advance(2000);
    const version = await transportState.set('live', 'kept', { ttlMs: 60_000 });
    await transportState.append('live', 'entry');
    for (let i = 0; i < 3000; i += 1) {
      await transportState.set(`new${i}`, 'v', { ttlMs: 1000 });
      await transportState.append(`new${i}`, 'v', { ttlMs: 1000 });
    }
    expect(await transportState.get('live')).toEqual({ value: 'kept', version });
    expect(await transportState.readList('live')).toEqual(['entry']);
    expect(await transportState.get('old0')).toBeNull();
  });
});

import { describe, expect, it } from 'vitest';
import {
  type PacerClock,
  slidingWindowPacer,
  teamsConversationLimits,
} from '../../adapters/chat/teams/pacer.js';

/** Virtual time: `sleep` moves the clock, so a run shows when each call would start. */
function virtualClock(): PacerClock & { time: number } {
  const clock = {
    time: 0,
    now: () => clock.time,
    sleep: async (ms: number) => {
      clock.time += ms;
    },
  };
  return clock;
}

/** The start time of each of `count` calls under one key, all asked for at once. */
async function startTimes(count: number, key = 'a:conversation'): Promise<number[]> {
  const clock = virtualClock();
  const pacer = slidingWindowPacer(teamsConversationLimits, clock);
  const starts: number[] = [];
  await Promise.all(Array.from({ length: count }, () => pacer.run(key, async () => starts.push(clock.time))));
  return starts;
}

/** The most starts within any window of `windowMs`. */
function busiest(starts: readonly number[], windowMs: number): number {
  return Math.max(...starts.map((start) => starts.filter((t) => t >= start && t < start + windowMs).length));
}

describe('slidingWindowPacer with Teams limits', () => {
  it('lets 7 calls through at once, the 8th after a second', async () => {
    const starts = await startTimes(9);
    expect(starts.slice(0, 7)).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expect(starts[7]).toBe(1000);
    // 8 in two seconds: the 9th waits until the first leaves the two-second window.
    expect(starts[8]).toBe(2000);
  });

  it('never exceeds 7 a second, 8 in two seconds or 60 in thirty seconds', async () => {
    const starts = await startTimes(130);
    expect(busiest(starts, 1000)).toBeLessThanOrEqual(7);
    expect(busiest(starts, 2000)).toBeLessThanOrEqual(8);
    expect(busiest(starts, 30_000)).toBeLessThanOrEqual(60);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
  });

  it('paces each conversation on its own', async () => {
    const clock = virtualClock();
    const pacer = slidingWindowPacer(teamsConversationLimits, clock);
    const starts: Record<string, number[]> = { a: [], b: [] };
    await Promise.all(
      ['a', 'b'].flatMap((key) =>
        Array.from({ length: 7 }, () => pacer.run(key, async () => starts[key]?.push(clock.time))),
      ),
    );
    expect(starts).toEqual({ a: [0, 0, 0, 0, 0, 0, 0], b: [0, 0, 0, 0, 0, 0, 0] });
  });

  it('answers what the call answers, and lets a failed call count without blocking the next', async () => {
    const pacer = slidingWindowPacer(teamsConversationLimits, virtualClock());
    await expect(pacer.run('a', async () => 'sent')).resolves.toBe('sent');
    await expect(pacer.run('a', async () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    await expect(pacer.run('a', async () => 'again')).resolves.toBe('again');
  });
});

describe('slidingWindowPacer within another (a conversation within its tenant), in real time', () => {
  const conversation = [{ limit: 2, windowMs: 300 }];
  const tenant = [{ limit: 3, windowMs: 300 }];

  it("counts a conversation's call when it is made, after its tenant's turn, not when it asked", async () => {
    const conversations = slidingWindowPacer(conversation);
    const tenants = slidingWindowPacer(tenant);
    const made: Record<string, number[]> = {};
    const call = (conversationId: string) =>
      conversations.run(
        conversationId,
        async () => {
          made[conversationId] = [...(made[conversationId] ?? []), performance.now()];
        },
        { alsoWithin: () => tenants.run('tenant', async () => undefined) },
      );
    // The tenant's turns taken by other conversations first, then four calls of one conversation.
    const others = Array.from({ length: 6 }, (_, i) => call(`other-${i}`));
    const four = Array.from({ length: 4 }, () => call('busy'));
    await Promise.all([...others, ...four]);
    const busy = made.busy ?? [];
    expect(busy).toHaveLength(4);
    // Never more than 2 of its calls within 300 ms, nor 3 of the tenant's (a few milliseconds of
    // timers aside): both limits hold when the calls are made.
    for (let i = 2; i < busy.length; i += 1) {
      expect((busy[i] ?? 0) - (busy[i - 2] ?? 0)).toBeGreaterThanOrEqual(290);
    }
    const all = Object.values(made)
      .flat()
      .sort((a, b) => a - b);
    for (let i = 3; i < all.length; i += 1) {
      expect((all[i] ?? 0) - (all[i - 3] ?? 0)).toBeGreaterThanOrEqual(290);
    }
  });

  it("asks the tenant again for a call its conversation held back after the tenant's turn was given", async () => {
    const conversations = slidingWindowPacer([{ limit: 2, windowMs: 600 }]);
    const tenants = slidingWindowPacer(tenant);
    const made: number[] = [];
    const call = (conversationId: string, urgent: boolean) =>
      conversations.run(conversationId, async () => made.push(performance.now()), {
        urgent,
        alsoWithin: () => tenants.run('tenant', async () => undefined, { urgent }),
      });
    const calls = [call('c', true), call('x', true), call('y', true)];
    await new Promise((resolve) => setTimeout(resolve, 10));
    // An update of c takes the tenant's next turn; a send of c, urgent, fills c's window meanwhile.
    calls.push(call('c', false));
    await new Promise((resolve) => setTimeout(resolve, 10));
    calls.push(call('c', true));
    await new Promise((resolve) => setTimeout(resolve, 400));
    for (const other of ['z0', 'z1', 'z2']) calls.push(call(other, true));
    await Promise.all(calls);
    made.sort((a, b) => a - b);
    for (let i = 3; i < made.length; i += 1) {
      expect((made[i] ?? 0) - (made[i - 3] ?? 0)).toBeGreaterThanOrEqual(290);
    }
  });

  it('lets an urgent call of a key go before the others waiting, not after them', async () => {
    const tenants = slidingWindowPacer(tenant);
    const started = performance.now();
    const background = Array.from({ length: 12 }, () =>
      tenants.run('tenant', async () => performance.now(), { urgent: false }),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    const urgent = await tenants.run('tenant', async () => performance.now());
    // 12 calls at 3 per 300 ms take 1.2 s; the urgent one comes in the next window, not after them.
    expect(urgent - started).toBeLessThan(700);
    const last = Math.max(...(await Promise.all(background)));
    expect(last).toBeGreaterThan(urgent);
  });
});

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

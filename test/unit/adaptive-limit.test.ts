import { setTimeout } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createAdaptiveLimit, type LoopTime } from '../../core/due-work/adaptive-limit.js';

/** An event loop whose time the test moves. */
function fakeLoop() {
  const time: LoopTime = { idle: 0, active: 0 };
  return {
    loopTime: () => ({ ...time }),
    busy(ms: number) {
      time.active += ms;
    },
    idle(ms: number) {
      time.idle += ms;
    },
  };
}

type Limit = ReturnType<typeof createAdaptiveLimit>;

/** A limit of 16 to 128 items, watching `loop` in windows of 100 ms. */
const limitOn = (loop: ReturnType<typeof fakeLoop>): Limit =>
  createAdaptiveLimit({ max: 128, min: 16, windowMs: 100, loopTime: loop.loopTime });

/** One window of 100 ms in which more items were due than ran, `idleMs` of it idle. */
function saturatedWindow(limit: Limit, loop: ReturnType<typeof fakeLoop>, idleMs: number): number {
  limit.slotsRanOut();
  loop.idle(idleMs);
  loop.busy(100 - idleMs);
  limit.finished();
  return limit.current;
}

describe('adaptive limit of due items at once', () => {
  it('starts at the fewest', () => {
    expect(limitOn(fakeLoop()).current).toBe(16);
  });

  it('grows by half again each window in which the loop idled, up to the most', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    const seen = Array.from({ length: 7 }, () => saturatedWindow(limit, loop, 30));
    expect(seen).toEqual([24, 36, 54, 81, 122, 128, 128]);
  });

  it('shrinks to two thirds each window in which the loop never idled, down to the fewest', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    for (let i = 0; i < 6; i += 1) saturatedWindow(limit, loop, 30);
    const seen = Array.from({ length: 8 }, () => saturatedWindow(limit, loop, 0));
    expect(seen).toEqual([85, 57, 38, 25, 17, 16, 16, 16]);
  });

  it('counts a loop that idled 2% of a window as busy, and one that idled more as waiting', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    expect(saturatedWindow(limit, loop, 3)).toBe(24);
    expect(saturatedWindow(limit, loop, 2)).toBe(16);
  });

  it('does not move before a window has passed', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    limit.slotsRanOut();
    loop.idle(99);
    limit.finished();
    expect(limit.current).toBe(16);
    loop.idle(1);
    limit.finished();
    expect(limit.current).toBe(24);
  });

  it('does not move in a window in which it held nothing back: items ran out, or slots never did', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    limit.slotsRanOut();
    limit.itemsRanOut();
    loop.idle(100);
    limit.finished();
    expect(limit.current).toBe(16);
    loop.idle(100);
    limit.finished();
    expect(limit.current).toBe(16);
    // Each window judges only what happened in it.
    expect(saturatedWindow(limit, loop, 30)).toBe(24);
  });

  it('stays at the most when the fewest is more than the most', () => {
    const loop = fakeLoop();
    const limit = createAdaptiveLimit({ max: 4, min: 16, windowMs: 100, loopTime: loop.loopTime });
    expect(limit.current).toBe(4);
    expect(saturatedWindow(limit, loop, 30)).toBe(4);
    expect(saturatedWindow(limit, loop, 0)).toBe(4);
  });

  it("reads Node's event loop by default: waiting on a timer is idle, work without a break is busy", async () => {
    const limit = createAdaptiveLimit({ max: 128, min: 16, windowMs: 10 });
    limit.slotsRanOut();
    await setTimeout(30);
    limit.finished();
    expect(limit.current).toBe(24);
    limit.slotsRanOut();
    const started = performance.now();
    while (performance.now() - started < 20) limit.finished();
    expect(limit.current).toBe(16);
  });
});

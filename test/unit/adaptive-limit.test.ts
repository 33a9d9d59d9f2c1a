import { setTimeout } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  type AdaptiveLimit,
  createAdaptiveLimit,
  type LoopTime,
} from '../../core/due-work/adaptive-limit.js';

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

type Loop = ReturnType<typeof fakeLoop>;

/** A limit of 16 to 128 items, watching `loop` in windows of 100 ms. */
const limitOn = (loop: Loop): AdaptiveLimit =>
  createAdaptiveLimit({ max: 128, min: 16, windowMs: 100, loopTime: loop.loopTime });

/**
 * One window of 100 ms in which the limit held items back, `idleMs` of it idle, and `finished` items
 * ended; answers the limit after it was judged.
 */
function heldBack(limit: AdaptiveLimit, loop: Loop, idleMs: number, finished = 100): number {
  limit.slotsRanOut();
  for (let i = 0; i < finished; i += 1) limit.finished();
  loop.idle(idleMs);
  loop.busy(100 - idleMs);
  limit.judge();
  return limit.current;
}

/** A limit at 128, after six windows in which the loop idled. */
function atMost(loop: Loop): AdaptiveLimit {
  const limit = limitOn(loop);
  for (let i = 0; i < 6; i += 1) heldBack(limit, loop, 30);
  expect(limit.current).toBe(128);
  return limit;
}

describe('adaptive limit of due items at once', () => {
  it('starts at the fewest', () => {
    expect(limitOn(fakeLoop()).current).toBe(16);
  });

  it('grows by half again each window in which the loop idled, up to the most', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    expect(Array.from({ length: 7 }, () => heldBack(limit, loop, 30))).toEqual([
      24, 36, 54, 81, 122, 128, 128,
    ]);
  });

  it('shrinks to two thirds each busy window while as many items finish a second, down to the fewest', () => {
    const loop = fakeLoop();
    const limit = atMost(loop);
    expect(Array.from({ length: 7 }, () => heldBack(limit, loop, 0))).toEqual([85, 57, 38, 25, 17, 16, 16]);
  });

  it('counts a loop that idled 2% of a window as busy, and one that idled more as waiting', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    expect(heldBack(limit, loop, 3)).toBe(24);
    expect(heldBack(limit, loop, 2)).toBe(16);
  });

  it('on a busy loop, turns up when a step down cost more than a tenth of the items a second', () => {
    const loop = fakeLoop();
    const limit = atMost(loop);
    expect(heldBack(limit, loop, 0, 100)).toBe(85);
    expect(heldBack(limit, loop, 0, 91)).toBe(57);
    expect(heldBack(limit, loop, 0, 81)).toBe(86);
  });

  it('on a busy loop, goes on up while each step gains more than a tenth, and turns when one does not', () => {
    const loop = fakeLoop();
    const limit = atMost(loop);
    heldBack(limit, loop, 0, 100);
    expect(heldBack(limit, loop, 0, 60)).toBe(128);
    expect(heldBack(limit, loop, 0, 90)).toBe(128);
    expect(heldBack(limit, loop, 0, 99)).toBe(85);
  });

  it('at the fewest on a busy loop, tries one step up every tenth window and keeps it only if it gains', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    const seen = Array.from({ length: 12 }, () => heldBack(limit, loop, 0));
    expect(seen).toEqual([16, 16, 16, 16, 16, 16, 16, 16, 16, 24, 16, 16]);
  });

  it('climbs from the fewest on a busy loop when the items finish a second grow with the limit', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    // Items that wait on the network in a process kept busy by other work: as many finish a second
    // as run at once.
    const seen = Array.from({ length: 16 }, () => heldBack(limit, loop, 0, limit.current));
    expect(seen.slice(8)).toEqual([16, 24, 36, 54, 81, 122, 128, 85]);
  });

  it('does not move before a window has passed, and answers whether it grew', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    limit.slotsRanOut();
    loop.idle(99);
    expect(limit.judge()).toBe(false);
    expect(limit.current).toBe(16);
    loop.idle(1);
    expect(limit.judge()).toBe(true);
    expect(limit.current).toBe(24);
    limit.slotsRanOut();
    loop.busy(100);
    expect(limit.judge()).toBe(false);
    expect(limit.current).toBe(16);
  });

  it('does not move in a window in which it held nothing back: items ran out, or slots never did', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    limit.slotsRanOut();
    limit.itemsRanOut();
    loop.idle(100);
    limit.judge();
    expect(limit.current).toBe(16);
    loop.idle(100);
    limit.judge();
    expect(limit.current).toBe(16);
    // Each window judges only what happened in it.
    expect(heldBack(limit, loop, 30)).toBe(24);
  });

  it('stays at the most when the fewest is more than the most', () => {
    const loop = fakeLoop();
    const limit = createAdaptiveLimit({ max: 4, min: 16, windowMs: 100, loopTime: loop.loopTime });
    expect(limit.current).toBe(4);
    expect(heldBack(limit, loop, 30)).toBe(4);
    expect(heldBack(limit, loop, 0)).toBe(4);
  });

  it("reads Node's event loop by default: waiting on a timer is idle, work without a break is busy", async () => {
    const limit = createAdaptiveLimit({ max: 128, min: 16, windowMs: 10 });
    limit.slotsRanOut();
    await setTimeout(30);
    limit.judge();
    expect(limit.current).toBe(24);
    limit.slotsRanOut();
    const started = performance.now();
    while (performance.now() - started < 20) limit.finished();
    limit.judge();
    expect(limit.current).toBe(16);
  });
});

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
function heldBack(limit: AdaptiveLimit, loop: Loop, idleMs: number, finished = 1_000): number {
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

/** The limit after each of `count` busy windows in which `finished(current)` items ended. */
const busyWindows = (
  limit: AdaptiveLimit,
  loop: Loop,
  count: number,
  finished: (current: number) => number = () => 1_000,
): number[] => Array.from({ length: count }, () => heldBack(limit, loop, 0, finished(limit.current)));

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

  it('does not grow on a busy loop however few items ended: the runner leaves slow ones out of its count', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    expect(heldBack(limit, loop, 0, 0)).toBe(16);
    expect(heldBack(limit, loop, 0, 0)).toBe(16);
  });

  it('after a window at the same limit, goes on the way it last moved unless the items ended a second fell', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    expect(heldBack(limit, loop, 30)).toBe(24);
    // The first busy window only measures; the next, at the same limit, goes on up.
    expect(heldBack(limit, loop, 0, 1_000)).toBe(24);
    expect(heldBack(limit, loop, 0, 1_000)).toBe(36);
    // A step up that gained nothing turns.
    expect(heldBack(limit, loop, 0, 1_000)).toBe(24);
    // Down, and down again while nothing is lost; a window at the same limit would go on down too.
    expect(heldBack(limit, loop, 0, 1_000)).toBe(16);
  });

  it('after a window at the same limit, turns if the items ended a second fell by more than a tenth', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    heldBack(limit, loop, 30);
    heldBack(limit, loop, 0, 1_000);
    expect(heldBack(limit, loop, 0, 850)).toBe(16);
  });

  it('counts a loop that idled 2% of a window as busy, and one that idled more as waiting', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    expect(heldBack(limit, loop, 3)).toBe(24);
    expect(heldBack(limit, loop, 2)).toBe(24);
    expect(heldBack(limit, loop, 3)).toBe(36);
  });

  it('at the most on a busy loop, holds while as many items end, tries a step down every tenth window, and goes on down while it costs nothing', () => {
    const loop = fakeLoop();
    const limit = atMost(loop);
    expect(busyWindows(limit, loop, 17)).toEqual([...Array(10).fill(128), 85, 57, 38, 25, 17, 16, 16]);
  });

  it('at the most on a busy loop, turns down when the items ended a second fell by more than a tenth', () => {
    const loop = fakeLoop();
    const limit = atMost(loop);
    expect(heldBack(limit, loop, 0, 1_000)).toBe(128);
    expect(heldBack(limit, loop, 0, 950)).toBe(128);
    expect(heldBack(limit, loop, 0, 850)).toBe(85);
  });

  it('going down on a busy loop, turns up when a step cost more than a tenth of the items a second', () => {
    const loop = fakeLoop();
    const limit = atMost(loop);
    heldBack(limit, loop, 0, 1_000);
    expect(heldBack(limit, loop, 0, 890)).toBe(85);
    expect(heldBack(limit, loop, 0, 846)).toBe(57);
    expect(heldBack(limit, loop, 0, 700)).toBe(86);
  });

  it('going up on a busy loop, goes on while each step gains more than a tenth, and turns when one does not', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    heldBack(limit, loop, 0, 1_000);
    expect(heldBack(limit, loop, 0, 800)).toBe(24);
    expect(heldBack(limit, loop, 0, 1_000)).toBe(36);
    expect(heldBack(limit, loop, 0, 1_050)).toBe(24);
  });

  it('at the fewest on a busy loop, tries a step up every tenth window and keeps it only if it gains', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    expect(busyWindows(limit, loop, 12)).toEqual([...Array(10).fill(16), 24, 16]);
  });

  it('climbs from the fewest on a busy loop when the items ended a second grow with the limit', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    // Items that wait on the network in a process kept busy by other work: as many end a second as
    // run at once.
    const seen = busyWindows(limit, loop, 18, (current) => current * 20);
    expect(seen.slice(10)).toEqual([24, 36, 54, 81, 122, 128, 128, 128]);
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
    for (let i = 0; i < 1_000; i += 1) limit.finished();
    loop.busy(100);
    expect(limit.judge()).toBe(false);
    expect(limit.current).toBe(24);
  });

  it('does not move in a window in which it held nothing back: a claim came back short, or slots never ran out', () => {
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

  it('starts the window again when a claim comes back short', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    limit.slotsRanOut();
    loop.idle(60);
    limit.itemsRanOut();
    limit.slotsRanOut();
    loop.idle(60);
    expect(limit.judge()).toBe(false);
    loop.idle(40);
    expect(limit.judge()).toBe(true);
  });

  it('starts a window when the limit starts holding items back: the wait for items to fall due is not in it', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    loop.idle(900);
    expect(heldBack(limit, loop, 0)).toBe(16);
  });

  it('forgets the items ended a second of a busy window once a window was idle', () => {
    const loop = fakeLoop();
    const limit = limitOn(loop);
    heldBack(limit, loop, 0, 1_000);
    heldBack(limit, loop, 30);
    // Compared with the window before the idle one, 800 would have fallen by a fifth and turned it.
    expect(heldBack(limit, loop, 0, 800)).toBe(24);
  });

  it.each([
    [
      'a claim came back short',
      (limit: AdaptiveLimit) => {
        limit.itemsRanOut();
      },
    ],
    [
      'a window held nothing back',
      (limit: AdaptiveLimit, loop: Loop) => {
        loop.busy(100);
        limit.judge();
      },
    ],
  ])('forgets the items ended a second of a busy window once %s', (_, interrupt) => {
    const loop = fakeLoop();
    const limit = atMost(loop);
    heldBack(limit, loop, 0, 1_000);
    interrupt(limit, loop);
    // Compared with the window before, 800 would have fallen by a fifth and turned it down.
    expect(heldBack(limit, loop, 0, 800)).toBe(128);
    expect(heldBack(limit, loop, 0, 800)).toBe(128);
  });

  it('stays at the most when the fewest is more than the most', () => {
    const loop = fakeLoop();
    const limit = createAdaptiveLimit({ max: 4, min: 16, windowMs: 100, loopTime: loop.loopTime });
    expect(limit.current).toBe(4);
    expect(heldBack(limit, loop, 30)).toBe(4);
    expect(busyWindows(limit, loop, 12)).toEqual(Array(12).fill(4));
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
    // Busy: the first busy window only measures.
    expect(limit.judge()).toBe(false);
    expect(limit.current).toBe(24);
  });
});

import { performance } from 'node:perf_hooks';

/** Time the event loop spent idle and running since some fixed moment (ms), as Node counts it. */
export interface LoopTime {
  idle: number;
  active: number;
}

/** Options of {@link createAdaptiveLimit}. */
export interface AdaptiveLimitOptions {
  /** The most items at once. */
  max: number;
  /** Where the limit starts, and the fewest items at once it goes down to (at most `max`). */
  min: number;
  /** The shortest span (ms) over which the limit judges how the items fared before it moves. */
  windowMs: number;
  /** The event loop's time so far; Node's `performance.eventLoopUtilization()` by default. */
  loopTime?: () => LoopTime;
}

/**
 * How many due items run at once. An item that waits on the network (a chat platform, Redis, a
 * callback receiver) finishes no later with more beside it, so more at once finish more a second.
 * An item that only takes the processor (memory storage and the inbox) finishes no sooner, and the
 * objects that many items hold at once make each young-generation collection copy more: 100,000
 * timeouts among 1,000,000 pending on memory ran at 34,500 and 31,800 a second with 16 at once,
 * against 31,200 and 27,400 with 128. Neither kind is known in advance, and one process runs both.
 *
 * So the limit judges each window in which it held items back (every slot was taken, or a claim
 * came back full) and which no claim that came back short cut off. If the event loop idled in it, the items were
 * waiting on something, and the limit grows. If the loop never idled, the processor is taken, by
 * the items or by other work such as HTTP requests: the limit goes on in the direction it last
 * moved while the items finished a second stay within a tenth of the window before (lower) or gain
 * more than a tenth on it (higher), and turns otherwise. Items that wait on the processor thus go
 * down to the fewest, where every tenth window tries one step up; items that wait on the network
 * in a busy process climb back.
 */
export interface AdaptiveLimit {
  /** The items that may run at once now. */
  readonly current: number;
  /** Every slot was taken, or a claim came back with all it asked for. */
  slotsRanOut(): void;
  /**
   * A claim came back with fewer items than it asked for: the limit held nothing back, and the
   * window starts again.
   */
  itemsRanOut(): void;
  /** An item finished. */
  finished(): void;
  /** Moves the limit if a window has passed since it last moved; answers whether it grew. */
  judge(): boolean;
}

/** The limit moves by this factor at a time. */
const step = 1.5;
/** The share of a window the loop may idle and still count as busy (a timer, a socket's turn). */
const busyIdleShare = 0.02;
/** How far the items finished a second may move before a busy window counts it as a change. */
const noise = 0.1;
/** At the fewest on a busy loop, one window in this many tries a step up. */
const probeEvery = 10;

const nodeLoopTime = (): LoopTime => performance.eventLoopUtilization();

/** Creates an {@link AdaptiveLimit} at `min`. */
export function createAdaptiveLimit(options: AdaptiveLimitOptions): AdaptiveLimit {
  const { max, windowMs, loopTime = nodeLoopTime } = options;
  const min = Math.min(options.min, max);
  let current = min;
  let start = loopTime();
  let heldBack = false;
  let finished = 0;
  /** The direction of the last move on a busy loop, and the rate (items a ms) of its window. */
  let direction: 1 | -1 = -1;
  let lastRate: number | null = null;
  let windowsAtFloor = 0;

  const busyMove = (rate: number): 1 | -1 => {
    const last = lastRate;
    lastRate = rate;
    if (last === null) return -1;
    if (direction < 0) return rate < last * (1 - noise) ? 1 : -1;
    return rate > last * (1 + noise) ? 1 : -1;
  };

  const resize = (next: number): boolean => {
    const before = current;
    current = Math.max(min, Math.min(max, Math.round(next)));
    return current > before;
  };

  return {
    get current() {
      return current;
    },
    slotsRanOut() {
      heldBack = true;
    },
    itemsRanOut() {
      start = loopTime();
      heldBack = false;
      finished = 0;
      lastRate = null;
    },
    finished() {
      finished += 1;
    },
    judge() {
      const now = loopTime();
      const idle = now.idle - start.idle;
      const elapsed = idle + now.active - start.active;
      if (elapsed < windowMs) return false;
      const counted = heldBack;
      const rate = finished / elapsed;
      start = now;
      heldBack = false;
      finished = 0;
      if (!counted) {
        lastRate = null;
        return false;
      }
      if (idle > elapsed * busyIdleShare) {
        direction = 1;
        lastRate = null;
        return resize(current * step);
      }
      direction = busyMove(rate);
      if (direction < 0 && current === min) {
        windowsAtFloor += 1;
        if (windowsAtFloor % probeEvery === 0) direction = 1;
      }
      return resize(direction > 0 ? current * step : current / step);
    },
  };
}

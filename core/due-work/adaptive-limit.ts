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
 * So the limit judges each window of at least `windowMs` in which it held items back (every slot was
 * taken, or a claim came back full), from when it started to, unless a claim that came back short
 * cut it off. If the event loop idled in it, the items wait on something, and the limit grows.
 * Otherwise the processor is taken, by the items or by other work such as HTTP requests, and the
 * limit climbs towards more items ended a second: it goes on the way it last moved while they stay
 * within a tenth (going down) or gain more than a tenth (going up), and turns otherwise; after a
 * window at the same limit it goes on unless they fell. Held at a bound, it turns if they fell by
 * more than a tenth, and every tenth window tries a step back. Items that wait on the processor
 * thus settle near the fewest, and items that wait on the network near the most. (The runner does
 * not count items that have run longer than a window: slow ones cannot hold back the rest.)
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
  /** Moves the limit if a window has passed since the last judgment or start; answers whether it grew. */
  judge(): boolean;
}

/** The limit moves by this factor at a time. */
const step = 1.5;
/** The share of a window the loop may idle and still count as busy (a timer, a socket's turn). */
const busyIdleShare = 0.02;
/** How far the items finished a second may move before a busy window counts it as a change. */
const noise = 0.1;
/** Held at a bound on a busy loop, one window in this many tries a step back. */
const probeEvery = 10;

const nodeLoopTime = (): LoopTime => performance.eventLoopUtilization();

/** Creates an {@link AdaptiveLimit} at `min`. */
export function createAdaptiveLimit(options: AdaptiveLimitOptions): AdaptiveLimit {
  const { max, windowMs, loopTime = nodeLoopTime } = options;
  const min = Math.min(options.min, max);
  let current = min;
  let start = loopTime();
  let heldBack = false;
  /** Items ended in the window. */
  let endedInWindow = 0;
  /** The way the limit last moved on a busy loop, and the items ended a ms in that window. */
  let direction: 1 | -1 = -1;
  let lastRate: number | null = null;
  /** The limit in the window of `lastRate`. */
  let lastLimit = current;
  /** Busy windows in a row held at the bound the limit was heading for. */
  let windowsAtBound = 0;

  /** The step of a busy window: 1 up, -1 down, 0 none. */
  const busyStep = (rate: number): number => {
    const last = lastRate;
    const stepped = current !== lastLimit;
    lastRate = rate;
    lastLimit = current;
    // The first busy window after others only measures.
    if (last === null) return 0;
    const fell = rate < last * (1 - noise);
    const rose = rate > last * (1 + noise);
    if (current === (direction < 0 ? min : max)) {
      // Held at the bound it was heading for, it turns back if the items ended a second fell, and
      // every tenth window tries a step back, in case the items have changed.
      windowsAtBound += 1;
      if (!fell && windowsAtBound % probeEvery !== 0) return 0;
    } else if (direction < 0 || !stepped ? !fell : rose) {
      // Going down, or after a window at the same limit (the one that only measured): on unless
      // the items ended a second fell; going up, on only while a step gains.
      return direction;
    }
    windowsAtBound = 0;
    direction = direction < 0 ? 1 : -1;
    return direction;
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
      // The window starts when the limit starts holding items back, not at the last judgment: the
      // time the runner waited for items to fall due says nothing of the limit.
      if (!heldBack) {
        start = loopTime();
        endedInWindow = 0;
      }
      heldBack = true;
    },
    itemsRanOut() {
      start = loopTime();
      heldBack = false;
      endedInWindow = 0;
      lastRate = null;
      windowsAtBound = 0;
    },
    finished() {
      endedInWindow += 1;
    },
    judge() {
      const now = loopTime();
      const idle = now.idle - start.idle;
      const elapsed = idle + now.active - start.active;
      if (elapsed < windowMs) return false;
      const counted = heldBack;
      const ended = endedInWindow;
      start = now;
      heldBack = false;
      endedInWindow = 0;
      if (!counted) {
        lastRate = null;
        windowsAtBound = 0;
        return false;
      }
      // The loop idled: the items wait on something other than this process's processor.
      if (idle > elapsed * busyIdleShare) {
        direction = 1;
        lastRate = null;
        windowsAtBound = 0;
        return resize(current * step);
      }
      const move = busyStep(ended / elapsed);
      return move !== 0 && resize(move > 0 ? current * step : current / step);
    },
  };
}

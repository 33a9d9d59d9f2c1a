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
  /** How long the loop is watched (ms) before the limit moves. */
  windowMs: number;
  /** The event loop's time so far; Node's `performance.eventLoopUtilization()` by default. */
  loopTime?: () => LoopTime;
}

/**
 * How many due items run at once. An item that waits on the network (a chat platform, Redis)
 * finishes no later with more beside it, so more at once finish more a second. An item that only
 * takes the processor (memory storage and the inbox) finishes no sooner, and the objects that many
 * items hold at once make each young-generation collection copy more: 100,000 timeouts among
 * 1,000,000 pending on memory ran at 34,500 and 31,800 a second with 16 at once, against 31,200 and
 * 27,400 with 128. Neither kind is known in advance, and one process runs both. So the limit watches the event loop while more items
 * are due than run: when the loop idled, items were waiting, and the limit grows; when it never
 * idled, the processor is what they wait for, and the limit shrinks, which costs no throughput as
 * long as the loop stays busy.
 */
export interface AdaptiveLimit {
  /** The items that may run at once now. */
  readonly current: number;
  /** More items were due than slots were free. */
  slotsRanOut(): void;
  /** Fewer items were due than slots were free: the limit held nothing back in this window. */
  itemsRanOut(): void;
  /** An item finished: the limit moves if a window has passed. */
  finished(): void;
}

/** The limit moves by this factor at a time. */
const step = 1.5;
/** The share of a window the loop may idle and still count as busy (a timer, a socket's turn). */
const busyIdleShare = 0.02;

const nodeLoopTime = (): LoopTime => performance.eventLoopUtilization();

/** Creates an {@link AdaptiveLimit} at `min`. */
export function createAdaptiveLimit(options: AdaptiveLimitOptions): AdaptiveLimit {
  const { max, windowMs, loopTime = nodeLoopTime } = options;
  const min = Math.min(options.min, max);
  let current = min;
  let start = loopTime();
  let saturated = false;
  let starved = false;

  return {
    get current() {
      return current;
    },
    slotsRanOut() {
      saturated = true;
    },
    itemsRanOut() {
      starved = true;
    },
    finished() {
      const now = loopTime();
      const idle = now.idle - start.idle;
      const elapsed = idle + now.active - start.active;
      if (elapsed < windowMs) return;
      if (saturated && !starved) {
        current =
          idle > elapsed * busyIdleShare
            ? Math.min(max, Math.round(current * step))
            : Math.max(min, Math.round(current / step));
      }
      start = now;
      saturated = false;
      starved = false;
    },
  };
}

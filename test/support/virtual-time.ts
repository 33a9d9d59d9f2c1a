import { type SchedulerAction, type SchedulerLike, type Subscription, VirtualTimeScheduler } from 'rxjs';
import type { Clock } from '../../core/ports/clock.js';

/**
 * Virtual time for code that mixes an RxJS scheduler with promises (the request machine, the
 * due-work runner): the scheduler's frames are epoch milliseconds, and the clock reads them.
 */
export interface VirtualTime {
  scheduler: VirtualTimeScheduler;
  /** Reads the scheduler's current frame: pass it wherever the code under test takes a clock. */
  clock: Clock;
  /** Runs every scheduled action up to `epochMs`, awaiting the promises they start, then sets the clock there. */
  advanceTo(epochMs: number): Promise<void>;
  /** {@link advanceTo} `now + ms`. */
  advanceBy(ms: number): Promise<void>;
  /** Runs what is due now and awaits the promises it starts, until nothing more is due now. */
  settle(): Promise<void>;
}

/** One turn of the event loop: every pending microtask (promise continuation) runs before it ends. */
export const macrotask = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Waits until the microtask queue is empty and stays so for `rounds` turns of the event loop. Enough
 * for in-memory adapters, whose promises never wait on real timers or I/O.
 */
export async function quiesce(rounds = 2): Promise<void> {
  for (let i = 0; i < rounds; i += 1) await macrotask();
}

/** A virtual clock and scheduler starting at `start` (default 2026-01-01T00:00:00.000Z). */
export function virtualTime(start = Date.parse('2026-01-01T00:00:00.000Z')): VirtualTime {
  const scheduler = new VirtualTimeScheduler();
  // Frames are the clock: the scheduler answers `now()` with its frame, and delays are added to it.
  scheduler.frame = start;
  const clock: Clock = { now: () => scheduler.now() };

  async function advanceTo(target: number): Promise<void> {
    if (target < scheduler.frame) throw new RangeError(`cannot go back from ${scheduler.frame} to ${target}`);
    for (;;) {
      await quiesce();
      const next = scheduler.actions[0];
      if (next === undefined || next.delay > target) break;
      scheduler.maxFrames = target;
      scheduler.flush();
    }
    scheduler.frame = target;
    scheduler.maxFrames = Number.POSITIVE_INFINITY;
    await quiesce();
    // Work started by the last promises may have scheduled actions that are due at `target` itself.
    const due = scheduler.actions[0];
    if (due !== undefined && due.delay <= target) await advanceTo(target);
  }

  return {
    scheduler,
    clock,
    advanceTo,
    advanceBy: (ms) => advanceTo(scheduler.frame + ms),
    settle: () => advanceTo(scheduler.frame),
  };
}

/** A scheduler that forwards to `inner` and counts how often something was scheduled on it. */
export interface CountingScheduler extends SchedulerLike {
  readonly scheduled: number;
}

/** Wraps `inner`, counting `schedule` calls; `onSchedule` runs after each one (for invariants). */
export function countingScheduler(
  inner: SchedulerLike,
  onSchedule: () => void = () => {},
): CountingScheduler {
  let scheduled = 0;
  const counting: CountingScheduler = {
    get scheduled() {
      return scheduled;
    },
    now: () => inner.now(),
    schedule<T>(
      work: (this: SchedulerAction<T>, state?: T) => void,
      delay?: number,
      state?: T,
    ): Subscription {
      scheduled += 1;
      const subscription = inner.schedule(work, delay, state);
      onSchedule();
      return subscription;
    },
  };
  return counting;
}

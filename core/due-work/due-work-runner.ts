import { asyncScheduler, type SchedulerLike, type Subscription } from 'rxjs';
import type { ClaimedDueItem, DueWorkKind } from '../domain/due-work.js';
import type { Clock } from '../ports/clock.js';
import type { DueWorkStore } from '../ports/due-work-store.js';
import type { Logger } from '../ports/logger.js';
import { createAdaptiveLimit, type LoopTime } from './adaptive-limit.js';

/**
 * What a handler decided about an item: done, or run it again at `retryAt` (epoch ms), as its next
 * attempt or, `postponed`, as the same one (it was put off without being tried).
 */
export type DueWorkResult = { done: true } | { done: false; retryAt: number; postponed?: boolean };

/**
 * Most due items a runner runs at once unless told otherwise, while they wait on the network. An
 * item on Redis or MongoDB waits on several round trips in turn (the request, its write, the copies'
 * records); at 32 at once the process and Redis took turns waiting for each other, each busy about
 * half the time, and 100,000 timeouts due at once on Redis ran at 3,800 to 4,700 a second; at 128,
 * 4,700 to 7,100.
 */
export const defaultDueWorkConcurrency = 128;

/**
 * Where the limit starts, and the fewest it goes down to while the items wait on the processor
 * alone (memory storage and the inbox): from there it reaches 128 in six windows of items waiting.
 */
const fewestAtOnce = 16;
/** How long the limit watches the event loop before it moves. */
const limitWindowMs = 100;

/** Runs one claimed item of a kind. Throwing is logged and retried after the lease ends. */
export type DueWorkHandler = (item: ClaimedDueItem) => Promise<DueWorkResult>;

/** Options of {@link createDueWorkRunner}. */
export interface DueWorkRunnerOptions {
  store: DueWorkStore;
  handlers: Record<DueWorkKind, DueWorkHandler>;
  clock: Clock;
  logger: Logger;
  /** The timer (and a drain's look after a window) runs on this scheduler; a virtual-time one in tests. */
  scheduler?: SchedulerLike;
  /** Longest sleep between looks at the store, so work enqueued by other instances is seen. */
  pollMs?: number;
  /** How long a claimed item stays hidden from other workers. */
  leaseMs?: number;
  /** Most items claimed per round trip. */
  batchSize?: number;
  /**
   * Most items running at once (default {@link defaultDueWorkConcurrency}). Items run independently:
   * one slow item (a callback receiver taking 15 s) holds one slot, and the items behind it run as
   * they fall due. Fewer run while the processor, not the network, is what they wait for
   * (`adaptive-limit.ts`).
   */
  concurrency?: number;
  /** The event loop's time so far, which the limit watches; Node's by default. */
  loopTime?: () => LoopTime;
}

/** Claims and runs due work with one timer, however many items are pending (and one more while a drain waits). */
export interface DueWorkRunner {
  start(): void;
  /** Stops the timer and waits for the items being run; a drain under way starts no more items. */
  stop(): Promise<void>;
  /** Something was enqueued in this process: look again now rather than at the next poll. */
  poke(): void;
  /** Runs every item due now, until none is left; answers how many ran (none while `stop()` runs). */
  drain(): Promise<number>;
}

/** `String(error)` throws for some values (an object without a prototype); a log line must not. */
function describeError(error: unknown): string {
  try {
    return String(error);
  } catch {
    return 'a thrown value that cannot be shown as text';
  }
}

/** Creates a {@link DueWorkRunner}. */
export function createDueWorkRunner(options: DueWorkRunnerOptions): DueWorkRunner {
  const { store, handlers, clock, logger, scheduler = asyncScheduler } = options;
  const {
    pollMs = 1_000,
    leaseMs = 60_000,
    batchSize = 100,
    concurrency = defaultDueWorkConcurrency,
  } = options;
  const limit = createAdaptiveLimit({
    max: concurrency,
    min: fewestAtOnce,
    windowMs: limitWindowMs,
    ...(options.loopTime === undefined ? {} : { loopTime: options.loopTime }),
  });
  let timer: Subscription | null = null;
  /** When the armed timer fires (epoch ms), or null when none is armed. */
  let armedAt: number | null = null;
  let started = false;
  /**
   * A look ran out of slots: the next item to finish looks again (and, below the most at once, the
   * timer after a window).
   */
  let saturated = false;
  let draining: Promise<number> | null = null;
  let again = false;
  /** Items being run, by this runner's every path (timer and drain), with when each started. */
  const inFlight = new Map<Promise<void>, number>();
  /**
   * What the running drain waits on for a slot to free up. One waiter, not a race over the items
   * in flight: a race subscribes to every one of them, each time one finishes.
   */
  let slotFreed: (() => void) | null = null;
  /** The running drain's look after a window while every slot is taken, if one is scheduled. */
  let drainWake: Subscription | null = null;
  /** `stop()` was called while a drain ran: it starts nothing more and ends with its items. */
  let drainStopped = false;
  /** `stop()` is waiting for the items in flight: no fill claims more. */
  let stopping = false;
  /** Claims are serialized so that concurrent looks never take more items than there are slots. */
  let claiming: Promise<number> = Promise.resolve(0);
  /**
   * The last fill stopped because the slots ran out, not the due items: more may be due. Items can
   * finish while a fill waits for its next claim (a batch smaller than the slots takes several), so
   * the slots need not all be busy when it ends.
   */
  let slotsRanOut = false;

  async function runItem(item: ClaimedDueItem): Promise<void> {
    try {
      const result = await handlers[item.kind](item);
      if (result.done) {
        await store.complete(item);
      } else {
        await store.reschedule(item, result.retryAt, { sameAttempt: result.postponed === true });
        // The timer was armed while this item was leased: wake earlier if its new time comes first.
        if (!saturated) armNoLaterThan(result.retryAt - clock.now());
      }
    } catch (error) {
      logger.error('due work failed; it runs again when its lease ends', {
        kind: item.kind,
        requestId: item.requestId,
        attempt: item.attempt,
        error: describeError(error),
      });
    } finally {
      limit.finished();
    }
  }

  function launch(item: ClaimedDueItem): void {
    const run: Promise<void> = runItem(item).finally(() => {
      inFlight.delete(run);
      freeSlot();
      // Refilled here rather than through the timer: 10,000 items due at once take one wake-up.
      if (saturated && started) {
        saturated = false;
        void look();
      }
    });
    inFlight.set(run, clock.now());
  }

  /**
   * The items in flight that started less than a window ago: those the limit counts. An item that
   * has run longer (a callback receiver that does not answer) waits on something, and the items
   * behind it run beside it, up to `concurrency` in all.
   */
  function recentlyStarted(): number {
    const now = clock.now();
    let count = 0;
    for (const [run, started] of inFlight) {
      // A wall clock set back would keep items started before it recent for as long: from now
      // they count for one window more.
      if (started > now) inFlight.set(run, now);
      if (started > now - limitWindowMs) count += 1;
    }
    return count;
  }

  /** Claims what is due, up to the free slots, and starts it without waiting; answers how many started. */
  async function fillSlots(): Promise<number> {
    let count = 0;
    for (;;) {
      if (stopping) return count;
      // At the most, the cap on every item in flight binds as soon: the recent ones need no count.
      const counted = limit.current < concurrency ? recentlyStarted() : inFlight.size;
      const want = Math.min(batchSize, limit.current - counted, concurrency - inFlight.size);
      slotsRanOut = want <= 0;
      if (slotsRanOut) {
        limit.slotsRanOut();
        if (limit.judge()) continue;
        return count;
      }
      const items = await store.claim(clock.now(), want, leaseMs);
      for (const item of items) launch(item);
      count += items.length;
      // Items may have ended during the claim, so the slots need not all be taken: a full claim
      // says as well that the limit holds items back.
      if (items.length < want) limit.itemsRanOut();
      else limit.slotsRanOut();
      limit.judge();
      if (items.length < want) return count;
    }
  }

  function fill(): Promise<number> {
    const next = claiming.catch(() => 0).then(fillSlots);
    claiming = next;
    return next;
  }

  function arm(delayMs: number): void {
    timer?.unsubscribe();
    timer = null;
    armedAt = null;
    if (!started) return;
    const delay = Math.max(0, Math.min(delayMs, pollMs));
    armedAt = clock.now() + delay;
    timer = scheduler.schedule(() => {
      timer = null;
      armedAt = null;
      void look();
    }, delay);
  }

  /** Arms the timer unless it is already armed to fire sooner. */
  function armNoLaterThan(delayMs: number): void {
    if (armedAt === null || clock.now() + delayMs < armedAt) arm(delayMs);
  }

  async function nextDelay(): Promise<number> {
    const next = await store.nextRunAt();
    return next === null ? pollMs : next - clock.now();
  }

  /** Ends the running drain's wait for a slot. */
  function freeSlot(): void {
    slotFreed?.();
    slotFreed = null;
  }

  async function drainAll(): Promise<number> {
    let total = 0;
    try {
      for (;;) {
        if (!drainStopped) total += await fill();
        if (inFlight.size === 0) return total;
        await new Promise<void>((resolve) => {
          slotFreed = resolve;
          // The items in flight may all be slow (a callback receiver that does not answer): the
          // limit is judged again after a window, and grows if the loop idled meanwhile.
          if (slotsRanOut && limit.current < concurrency && !drainStopped) {
            drainWake ??= scheduler.schedule(() => {
              drainWake = null;
              freeSlot();
            }, limitWindowMs);
          }
        });
      }
    } finally {
      drainWake?.unsubscribe();
      drainWake = null;
    }
  }

  /** A drain asked for while one runs joins it, and the running one looks once more at the end. */
  function drain(): Promise<number> {
    if (draining) {
      again = true;
      // The running drain may be waiting on items that hang: it looks again now.
      freeSlot();
      return draining;
    }
    draining = (async () => {
      let total = 0;
      do {
        again = false;
        total += await drainAll();
      } while (again && !drainStopped);
      return total;
    })().finally(() => {
      draining = null;
      drainStopped = false;
    });
    return draining;
  }

  /** Starts what is due and arms the timer for the next item, or waits for a slot when all are busy. */
  async function look(): Promise<void> {
    try {
      await fill();
      if (stopping) return;
      // More may be due than there were slots: the next item to finish looks again, so nothing
      // spins meanwhile and a burst of due items takes one wake-up of the timer. Below the most at
      // once, the timer looks again after a window too: the items in flight may all be slow, and
      // the limit grows if the loop idled meanwhile.
      if (slotsRanOut && inFlight.size > 0) {
        saturated = true;
        if (limit.current < concurrency) armNoLaterThan(limitWindowMs);
        else {
          timer?.unsubscribe();
          timer = null;
          armedAt = null;
        }
        return;
      }
      armNoLaterThan(await nextDelay());
    } catch (error) {
      // Stopped meanwhile: the store may be closed on purpose, and nothing tries again.
      if (!started) return;
      logger.error('due work store unreachable; trying again', { error: describeError(error) });
      arm(pollMs);
    }
  }

  return {
    start() {
      if (started) return;
      started = true;
      arm(0);
    },
    async stop() {
      stopping = true;
      started = false;
      timer?.unsubscribe();
      timer = null;
      armedAt = null;
      if (draining) {
        drainStopped = true;
        drainWake?.unsubscribe();
        drainWake = null;
      }
      await claiming.catch(() => 0);
      while (inFlight.size > 0) await Promise.allSettled([...inFlight.keys()]);
      stopping = false;
      // Started again while it waited: the looks of that start found nothing to do.
      if (started) arm(0);
    },
    poke() {
      if (started) arm(0);
    },
    drain,
  };
}

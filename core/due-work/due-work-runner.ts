import { asyncScheduler, type SchedulerLike, type Subscription } from 'rxjs';
import type { ClaimedDueItem, DueWorkKind } from '../domain/due-work.js';
import type { Clock } from '../ports/clock.js';
import type { DueWorkStore } from '../ports/due-work-store.js';
import type { Logger } from '../ports/logger.js';

/** What a handler decided about an item: done, or run it again at `retryAt` (epoch ms). */
export type DueWorkResult = { done: true } | { done: false; retryAt: number };

/** Runs one claimed item of a kind. Throwing is logged and retried after the lease ends. */
export type DueWorkHandler = (item: ClaimedDueItem) => Promise<DueWorkResult>;

/** Options of {@link createDueWorkRunner}. */
export interface DueWorkRunnerOptions {
  store: DueWorkStore;
  handlers: Record<DueWorkKind, DueWorkHandler>;
  clock: Clock;
  logger: Logger;
  /** The single timer runs on this scheduler; a virtual-time scheduler in tests. */
  scheduler?: SchedulerLike;
  /** Longest sleep between looks at the store, so work enqueued by other instances is seen. */
  pollMs?: number;
  /** How long a claimed item stays hidden from other workers. */
  leaseMs?: number;
  /** Items claimed per round trip. */
  batchSize?: number;
}

/** Claims and runs due work with one timer, however many items are pending. */
export interface DueWorkRunner {
  start(): void;
  /** Stops the timer and waits for the items being run. */
  stop(): Promise<void>;
  /** Something was enqueued in this process: look again now rather than at the next poll. */
  poke(): void;
  /** Runs every item due now, until none is left; answers how many ran. */
  drain(): Promise<number>;
}

/** Creates a {@link DueWorkRunner}. */
export function createDueWorkRunner(options: DueWorkRunnerOptions): DueWorkRunner {
  const { store, handlers, clock, logger, scheduler = asyncScheduler } = options;
  const { pollMs = 1_000, leaseMs = 60_000, batchSize = 100 } = options;
  let timer: Subscription | null = null;
  let running: Promise<number> | null = null;
  let again = false;
  let started = false;

  async function runItem(item: ClaimedDueItem): Promise<void> {
    try {
      const result = await handlers[item.kind](item);
      if (result.done) await store.complete(item);
      else await store.reschedule(item, result.retryAt);
    } catch (error) {
      logger.error('due work failed; it runs again when its lease ends', {
        kind: item.kind,
        requestId: item.requestId,
        attempt: item.attempt,
        error: String(error),
      });
    }
  }

  async function drainOnce(): Promise<number> {
    let count = 0;
    for (;;) {
      const items = await store.claim(clock.now(), batchSize, leaseMs);
      if (items.length === 0) return count;
      await Promise.all(items.map(runItem));
      count += items.length;
    }
  }

  function arm(delayMs: number): void {
    timer?.unsubscribe();
    if (!started) return;
    timer = scheduler.schedule(() => void tick(), Math.max(0, Math.min(delayMs, pollMs)));
  }

  async function nextDelay(): Promise<number> {
    const next = await store.nextRunAt();
    return next === null ? pollMs : next - clock.now();
  }

  function drain(): Promise<number> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      let total = 0;
      do {
        again = false;
        total += await drainOnce();
      } while (again);
      return total;
    })().finally(() => {
      running = null;
    });
    return running;
  }

  async function tick(): Promise<void> {
    try {
      await drain();
      arm(await nextDelay());
    } catch (error) {
      logger.error('due work store unreachable; trying again', { error: String(error) });
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
      started = false;
      timer?.unsubscribe();
      timer = null;
      await running?.catch(() => 0);
    },
    poke() {
      if (started) arm(0);
    },
    drain,
  };
}

import type { ClaimedDueItem, DueItem } from '../domain/due-work.js';

/** Options of {@link DueWorkStore.reschedule}. */
export interface RescheduleOptions {
  /** The item was put off, not tried: its `attempt` stays. */
  sameAttempt?: boolean;
}

/**
 * Durable scheduled work (timeouts, callback deliveries), claimed with a lease so that exactly one
 * worker runs each item, and an item whose worker died runs again once its lease ends.
 */
export interface DueWorkStore {
  /** Adds items, replacing any with the same id. */
  enqueue: (items: readonly DueItem[]) => Promise<void>;
  /**
   * Removes the items with these ids, claimed or not, wherever they were scheduled (by `enqueue` or
   * by a request write); an id without an item is skipped. A worker that holds one of them loses its
   * lease: completing or rescheduling it then changes nothing.
   */
  cancel: (ids: readonly string[]) => Promise<void>;
  /**
   * Claims up to `limit` items whose `runAt` is at most `now` and that no live lease holds, leasing
   * each until `now + leaseMs`.
   */
  claim: (now: number, limit: number, leaseMs: number) => Promise<ClaimedDueItem[]>;
  /** Removes a claimed item; does nothing when the lease was lost to another worker. */
  complete: (item: ClaimedDueItem) => Promise<void>;
  /**
   * Moves a claimed item to `runAt` with `attempt` + 1 and frees its lease; nothing when the lease was
   * lost. With `sameAttempt`, `attempt` stays: the item was put off without being tried.
   */
  reschedule: (item: ClaimedDueItem, runAt: number, options?: RescheduleOptions) => Promise<void>;
  /** When the next item becomes claimable (its runAt, or the end of its lease), or null when empty. */
  nextRunAt: () => Promise<number | null>;
}

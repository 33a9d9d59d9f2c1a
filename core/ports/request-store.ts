import type { DueItem } from '../domain/due-work.js';
import type { InteractiveRequest } from '../domain/interactive-request.js';

/** Due work to change atomically with a request write. */
export interface DueWorkChanges {
  /** Items to add (or replace, by id). */
  enqueue: DueItem[];
  /** Ids of items to remove. */
  cancel: string[];
}

/** Options of {@link RequestStore.updateRequest}. */
export interface RequestWriteOptions {
  /**
   * Given on the write that finishes a request: milliseconds from this write, by the store's clock
   * (the server's for Redis and MongoDB), after which the request and every copy the
   * `DeliveryStore` recorded under its id are gone, as if never stored (reads answer null and `[]`).
   * A positive number; fractions round up. Without it, an expiry set by an earlier write is kept.
   */
  ttlMs?: number;
}

/** Interactive requests, written with compare-and-set on `version`. */
export interface RequestStore {
  /**
   * Inserts a new request (version 0) and applies `due` in the same atomic step, so a stored request
   * always has its timeout scheduled. Throws when the id exists.
   */
  createRequest: (request: InteractiveRequest, due: DueWorkChanges) => Promise<void>;
  /** The request, or null. */
  getRequest: (id: string) => Promise<InteractiveRequest | null>;
  /**
   * Replaces the stored request with `next` only when the stored version equals `expectedVersion`
   * (`next.version` is `expectedVersion + 1`), applying `due` in the same atomic step. Returns
   * false, changing nothing, when another writer got there first. With `options.ttlMs`, the request
   * and its deliveries expire as {@link RequestWriteOptions.ttlMs} says, in the same step.
   */
  updateRequest: (
    next: InteractiveRequest,
    expectedVersion: number,
    due: DueWorkChanges,
    options?: RequestWriteOptions,
  ) => Promise<boolean>;
}

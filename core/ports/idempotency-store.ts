/** The scope of an idempotency key: keys of different organizations never meet. */
export interface IdempotencyScope {
  organizationId: string;
  key: string;
}

/** A completed answer, replayed byte-for-byte to repeats. */
export interface StoredResponse {
  status: number;
  body: string;
}

/** Timing of {@link IdempotencyStore.acquire}. */
export interface IdempotencyTiming {
  /** Epoch milliseconds. */
  now: number;
  /** How long a running attempt keeps the key before another may take over (a crashed process). */
  leaseMs: number;
  /** How long the record lives after it was first created (24 hours). */
  ttlMs: number;
}

/** What {@link IdempotencyStore.acquire} found. */
export type IdempotencyAcquisition =
  /**
   * The caller now runs the send, under `sendId`: the id it proposed for a new record, or the id of
   * the earlier, unfinished attempt it resumes.
   */
  | { outcome: 'acquired'; sendId: string }
  /** The key was completed before: replay this response. */
  | { outcome: 'completed'; response: StoredResponse }
  /** Another attempt holds the key right now. */
  | { outcome: 'busy' }
  /** The key was used with a different body. */
  | { outcome: 'mismatch' };

/**
 * Idempotency records (docs/behaviour.md#idempotency): at most one attempt at a time per key; 24 hours
 * of memory. An attempt is named by the send id it proposed to {@link IdempotencyStore.acquire} (a
 * new, random one each time), its `holder`: the record keeps the holder of its latest acquisition,
 * and the writes of an attempt act only while it holds the record. An attempt stalled past its lease
 * (a paused process) whose key another took over then changes nothing when it wakes up.
 */
export interface IdempotencyStore {
  /**
   * Atomically: when no live record exists, creates a running one (lease until now+leaseMs) that
   * holds `sendId`, the id the caller will send under, and answers `acquired` with it. When a record
   * exists with another fingerprint: `mismatch`. Completed: `completed`. Running with a live lease:
   * `busy`. Failed, or running with an expired lease: takes it over (new lease) and answers
   * `acquired` with the send id it holds, so that every attempt of one key sends under one id.
   * Either way the acquisition's holder is `sendId`, the id proposed.
   */
  acquire: (
    scope: IdempotencyScope,
    fingerprint: string,
    sendId: string,
    timing: IdempotencyTiming,
  ) => Promise<IdempotencyAcquisition>;
  /**
   * Extends the lease of a running record `holder` holds to `now + leaseMs` (never shortens it);
   * leaves any other record, or none, as it is. The attempt that holds the key renews it well before
   * its lease ends, for as long as it runs: a repeat takes over only from an attempt that stopped
   * (its process died), never from one that is slow.
   */
  renew: (
    scope: IdempotencyScope,
    holder: string,
    timing: Pick<IdempotencyTiming, 'now' | 'leaseMs'>,
  ) => Promise<void>;
  /**
   * Stores the final answer of the running record `holder` holds; repeats replay it until the record
   * expires. Any other record, or none, is left as it is.
   */
  complete: (scope: IdempotencyScope, holder: string, response: StoredResponse) => Promise<void>;
  /** Ends the running attempt `holder` holds without an answer; the next repeat resumes it. */
  fail: (scope: IdempotencyScope, holder: string) => Promise<void>;
  /**
   * Undoes the acquisition of a new record, as if the key had never been used: removes the record
   * when it is running and `holder` holds it; leaves any other record as it is. For an attempt
   * refused before it did anything (its callback address), whose refusal must leave the key free
   * for a corrected body. An attempt that resumed an earlier one (answered another send id) ends
   * with {@link fail} instead.
   */
  release: (scope: IdempotencyScope, holder: string) => Promise<void>;
}

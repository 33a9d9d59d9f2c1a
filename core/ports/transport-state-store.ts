/**
 * A record as {@link TransportStateStore.get} answers it.
 */
export interface TransportStateRecord {
  /** What the last write stored, as given (transports JSON-encode their data). */
  value: string;
  /**
   * Positive integer that every write of the key makes larger while the record exists. A record
   * written anew after it was deleted or expired may start again from a small version, so a version
   * is worth holding only while the record it was read from lives.
   */
  version: number;
}

/** Options of the writes of a {@link TransportStateStore}. */
export interface TransportStateWriteOptions {
  /**
   * Milliseconds from this write after which the record (or list) is gone, as if deleted. Each
   * write sets the expiry anew: from its own `ttlMs`, or to never when it gives none. Expiry follows
   * the store's clock (the server's for Redis and MongoDB). A positive number; fractions round up.
   */
  ttlMs?: number;
}

/**
 * What a chat transport (the inbox, Slack, Teams) keeps of its own: installations, user-id caches,
 * conversation and message references. Keyed records with versions for compare-and-set, and
 * append-only lists for indexes, so that an ordered index costs one write instead of a
 * read-modify-write loop. Every storage adapter implements this port once, and a new platform adds
 * keys, never methods.
 *
 * Keys and values are arbitrary strings. A key names at most one record and at most one list: the
 * two live side by side and never clash. Each member is atomic on its own (one round trip, or one
 * script or single-document update); none is atomic with another. A transport receives a view of
 * this store whose keys are namespaced by its platform (`ChatSink.state`), so platforms never see
 * each other's keys.
 *
 * Expiry: a record or list past its ttl is never returned, and writes treat it as absent.
 * Errors: an unreachable backend rejects with `NotifyError('unavailable')`; nothing is retried here.
 */
export interface TransportStateStore {
  /** The live record of `key`, or null when there is none (never written, deleted or expired). */
  get: (key: string) => Promise<TransportStateRecord | null>;
  /**
   * The live records of several keys at once, in the order of `keys` (null where there is none;
   * a key given twice is answered twice). One round trip, however many keys; `[]` for no keys.
   */
  getMany: (keys: readonly string[]) => Promise<(TransportStateRecord | null)[]>;
  /**
   * Writes `value` whatever the record holds (a blind write) and answers the new version, larger
   * than any version of the live record it replaces. Not idempotent in its version: a repeat writes
   * the same value under a larger one.
   */
  set: (key: string, value: string, options?: TransportStateWriteOptions) => Promise<number>;
  /**
   * Writes `value` only if the live record's version is `expectedVersion`, or, when that is null,
   * only if there is no live record. Answers the new version, or null when the expectation did not
   * hold (nothing is written then). Of concurrent calls expecting one version, exactly one succeeds:
   * the basis of every read-modify-write (read with `get`, change, write back, retry on null).
   */
  compareAndSet: (
    key: string,
    value: string,
    expectedVersion: number | null,
    options?: TransportStateWriteOptions,
  ) => Promise<number | null>;
  /** Removes the record and the list of `key`; idempotent (nothing to remove is not an error). */
  delete: (key: string) => Promise<void>;
  /**
   * Adds `value` at the end of the list of `key`, creating the list when there is none (or it has
   * expired), and sets the list's expiry as {@link TransportStateWriteOptions.ttlMs} says. Not
   * idempotent: a repeat appends the value again. Concurrent appends all land, in some order.
   */
  append: (key: string, value: string, options?: TransportStateWriteOptions) => Promise<void>;
  /** The entries of the live list of `key` in append order; `[]` when there is none. */
  readList: (key: string) => Promise<string[]>;
}

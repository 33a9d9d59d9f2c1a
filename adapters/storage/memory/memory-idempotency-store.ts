import type { Clock, IdempotencyScope, IdempotencyStore, StoredResponse } from '../../../core/adapter-kit.js';
import { createLazySweep } from './lazy-sweep.js';

/** Options of {@link memoryIdempotencyStore}. */
export interface MemoryIdempotencyStoreOptions {
  /** Decides when records expire, as a server's clock would for Redis or MongoDB. */
  clock: Clock;
}

/** What every record carries, whatever its state. */
interface RecordBase {
  fingerprint: string;
  /** Id the first attempt proposed, kept across takeovers so a resumed attempt reuses it. */
  sendId: string;
  /** Store-clock milliseconds; fixed at creation, so a takeover does not extend the 24 hours. */
  expiresAt: number;
  /** The send id the latest acquisition proposed: the attempt whose writes count. */
  holder: string;
}

/** An idempotency record: running under a lease, failed (resumable) or completed (replayable). */
type IdempotencyRecord = RecordBase &
  (
    | { state: 'running'; leaseUntil: number }
    | { state: 'failed' }
    | { state: 'completed'; response: StoredResponse }
  );

const scopeKey = (scope: IdempotencyScope): string => JSON.stringify([scope.organizationId, scope.key]);

/**
 * Idempotency records in a map. Leases are judged by the caller's `timing.now`, expiry by the store's
 * clock; expired records are dropped when read and swept lazily as it is written.
 */
export function memoryIdempotencyStore({ clock }: MemoryIdempotencyStoreOptions): IdempotencyStore {
  const records = new Map<string, IdempotencyRecord>();
  const sweep = createLazySweep(records, (record: IdempotencyRecord, now) => record.expiresAt <= now, clock);

  /** The record of a key unless it has expired, in which case it is dropped. */
  const live = (key: string): IdempotencyRecord | undefined => {
    const record = records.get(key);
    if (record === undefined || record.expiresAt > clock.now()) return record;
    records.delete(key);
    return undefined;
  };

  /** The live record of a scope while it runs under `holder`'s acquisition. */
  const held = (scope: IdempotencyScope, holder: string) => {
    const record = live(scopeKey(scope));
    return record?.state === 'running' && record.holder === holder ? record : undefined;
  };

  return {
    async acquire(scope, fingerprint, proposedSendId, { now, leaseMs, ttlMs }) {
      const key = scopeKey(scope);
      const record = live(key);
      if (record === undefined) {
        const created = clock.now();
        records.set(key, {
          fingerprint,
          sendId: proposedSendId,
          expiresAt: created + ttlMs,
          holder: proposedSendId,
          state: 'running',
          leaseUntil: now + leaseMs,
        });
        sweep();
        return { outcome: 'acquired', sendId: proposedSendId };
      }
      if (record.fingerprint !== fingerprint) return { outcome: 'mismatch' };
      if (record.state === 'completed') return { outcome: 'completed', response: { ...record.response } };
      if (record.state === 'running' && record.leaseUntil > now) return { outcome: 'busy' };
      const { fingerprint: fp, sendId, expiresAt } = record;
      records.set(key, {
        fingerprint: fp,
        sendId,
        expiresAt,
        holder: proposedSendId,
        state: 'running',
        leaseUntil: now + leaseMs,
      });
      return { outcome: 'acquired', sendId };
    },
    async renew(scope, holder, { now, leaseMs }) {
      const record = held(scope, holder);
      if (record !== undefined) record.leaseUntil = Math.max(record.leaseUntil, now + leaseMs);
    },
    async complete(scope, holder, response) {
      const record = held(scope, holder);
      if (record === undefined) return;
      const { fingerprint, sendId, expiresAt } = record;
      records.set(scopeKey(scope), {
        fingerprint,
        sendId,
        expiresAt,
        holder,
        state: 'completed',
        response: { ...response },
      });
    },
    async fail(scope, holder) {
      const record = held(scope, holder);
      if (record === undefined) return;
      const { fingerprint, sendId, expiresAt } = record;
      records.set(scopeKey(scope), { fingerprint, sendId, expiresAt, holder, state: 'failed' });
    },
    async release(scope, holder) {
      if (held(scope, holder) !== undefined) records.delete(scopeKey(scope));
    },
  } satisfies IdempotencyStore;
}

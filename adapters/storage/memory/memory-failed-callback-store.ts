import {
  type Clock,
  type FailedCallback,
  type FailedCallbackStore,
  systemClock,
  ttlMillis,
} from '../../../core/adapter-kit.js';
import { createLazySweep } from './lazy-sweep.js';

/** Options of {@link memoryFailedCallbackStore}. */
export interface MemoryFailedCallbackStoreOptions {
  /** Decides when failures expire, as a server's clock would for Redis or MongoDB; the system's by default. */
  clock?: Clock;
}

/** A failure, and when it is forgotten (store-clock milliseconds), or null when kept until taken. */
interface Kept {
  failure: FailedCallback;
  expiresAt: number | null;
}

/**
 * Failed callbacks by request id; a Map keeps insertion order, which is failure order. Expired
 * failures are dropped when read and swept lazily as failures are added.
 */
export function memoryFailedCallbackStore({
  clock = systemClock,
}: MemoryFailedCallbackStoreOptions = {}): FailedCallbackStore {
  const byRequest = new Map<string, Kept>();
  const isExpired = (kept: Kept, now: number) => kept.expiresAt !== null && kept.expiresAt <= now;
  const sweep = createLazySweep(byRequest, isExpired, clock);

  /** The failure of a request unless it has expired, in which case it is dropped. */
  const live = (requestId: string): FailedCallback | null => {
    const kept = byRequest.get(requestId);
    if (kept === undefined) return null;
    if (!isExpired(kept, clock.now())) return kept.failure;
    byRequest.delete(requestId);
    return null;
  };

  return {
    async add(failure, options) {
      const ttl = ttlMillis(options);
      byRequest.delete(failure.requestId);
      byRequest.set(failure.requestId, {
        failure: structuredClone(failure),
        expiresAt: ttl === null ? null : clock.now() + ttl,
      });
      sweep();
    },
    async list(organizationId) {
      const now = clock.now();
      const failures: FailedCallback[] = [];
      for (const kept of byRequest.values()) {
        if (isExpired(kept, now)) continue;
        if (organizationId === undefined || kept.failure.organizationId === organizationId) {
          failures.push(kept.failure);
        }
      }
      return structuredClone(failures);
    },
    async get(requestId) {
      const failure = live(requestId);
      return failure === null ? null : structuredClone(failure);
    },
    async take(requestId) {
      const failure = live(requestId);
      byRequest.delete(requestId);
      return failure === null ? null : structuredClone(failure);
    },
  } satisfies FailedCallbackStore;
}

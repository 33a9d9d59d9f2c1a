import {
  type AdmissionStore,
  admissionWithFollowUps,
  composedAdmission,
  type IdempotencyStore,
  type RequestStore,
} from '../../../core/adapter-kit.js';
import type { MemoryDirectoryStore } from './memory-directory-store.js';
import type { MemoryRateLimitStore } from './memory-rate-limit-store.js';

/** Options of {@link memoryAdmissionStore}: the stores whose state it reads and charges. */
export interface MemoryAdmissionStoreOptions {
  directory: MemoryDirectoryStore;
  rateLimits: MemoryRateLimitStore;
  /** Where an admitted request's idempotency claim is acquired. */
  idempotency: IdempotencyStore;
  /** Where an admitted interactive send's request is stored. */
  requests: RequestStore;
}

/**
 * Admission over the memory directory and buckets, composed of their synchronous operations so that
 * nothing else runs between the lookup and the takes: one atomic step, as on Redis. The recipients
 * of an admitted request are read from the directory, its idempotency claim acquired and its
 * interactive request stored, after it.
 */
export function memoryAdmissionStore({
  directory,
  rateLimits,
  idempotency,
  requests,
}: MemoryAdmissionStoreOptions): AdmissionStore {
  const decided = composedAdmission({
    findPrincipal: (digest) => directory.principalByDigest(digest),
    take: (buckets, count) => rateLimits.takeNow(buckets, count),
  });
  return admissionWithFollowUps(decided, { directory, idempotency, requests });
}

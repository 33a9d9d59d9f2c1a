import { type AdmissionStore, composedAdmission } from '../../../core/adapter-kit.js';
import { admissionWithRecipients } from '../admission-with-recipients.js';
import type { MemoryDirectoryStore } from './memory-directory-store.js';
import type { MemoryRateLimitStore } from './memory-rate-limit-store.js';

/** Options of {@link memoryAdmissionStore}: the stores whose state it reads and charges. */
export interface MemoryAdmissionStoreOptions {
  directory: MemoryDirectoryStore;
  rateLimits: MemoryRateLimitStore;
}

/**
 * Admission over the memory directory and buckets, composed of their synchronous operations so that
 * nothing else runs between the lookup and the takes: one atomic step, as on Redis. The recipients
 * of an admitted request are read from the directory after it.
 */
export function memoryAdmissionStore({ directory, rateLimits }: MemoryAdmissionStoreOptions): AdmissionStore {
  const decided = composedAdmission({
    findPrincipal: (digest) => directory.principalByDigest(digest),
    take: (buckets, count) => rateLimits.takeNow(buckets, count),
  });
  return admissionWithRecipients(decided, directory);
}

import {
  type AdmissionStore,
  apiKeyBucketKey,
  organizationBucketKey,
} from '../../../core/ports/admission-store.js';
import type { MemoryDirectoryStore } from './memory-directory-store.js';
import type { MemoryRateLimitStore } from './memory-rate-limit-store.js';

/** Options of {@link memoryAdmissionStore}: the stores whose state it reads and charges. */
export interface MemoryAdmissionStoreOptions {
  directory: MemoryDirectoryStore;
  rateLimits: MemoryRateLimitStore;
}

/**
 * Admission over the memory directory and buckets, composed of their synchronous operations so that
 * nothing else runs between the lookup and the takes: one atomic step, as on Redis.
 */
export function memoryAdmissionStore({ directory, rateLimits }: MemoryAdmissionStoreOptions): AdmissionStore {
  return {
    async admit({ digest, failedAuth, perKey, perOrganization }) {
      const principal = digest === null ? null : directory.principalByDigest(digest);
      if (principal === null || principal.apiKey.revokedAt !== null) {
        return { outcome: rateLimits.takeNow([failedAuth], 1) === null ? 'rejected' : 'blocked' };
      }
      const short = rateLimits.takeNow(
        [
          { key: apiKeyBucketKey(principal.apiKey.id), ...perKey },
          { key: organizationBucketKey(principal.organization.id), ...perOrganization },
        ],
        1,
      );
      if (short === null) return { outcome: 'admitted', principal };
      return { outcome: 'limited', by: short === 0 ? 'key' : 'organization', principal };
    },
  } satisfies AdmissionStore;
}

/**
 * Admission in MongoDB, composed of the directory's and the rate-limit store's operations.
 *
 * Not one round trip, and not one atomic step: MongoDB has no single-document way to read the key
 * and charge two shared buckets. The key lookup (one round trip), then one take: the
 * failed-authentication token of an invalid key, or both buckets of a valid key (two more round
 * trips, the take-then-compensate of the rate-limit store, with its behaviour under concurrency).
 * A valid key never reads the failed-authentication bucket. A key revoked between the lookup and the take is admitted once, as
 * if the request had arrived just before the revocation; the next request sees it. An admitted
 * request that names recipients (`recipientEmails`) or carries an idempotency claim costs one more
 * round trip: the directory's `findUsersByEmail` and the idempotency store's `acquire`, side by side;
 * one that stores an interactive request (`createRequest`) one more, the request store's insert.
 *
 * @module
 */
import {
  type AdmissionStore,
  admissionWithFollowUps,
  composedAdmission,
  type DirectoryStore,
  type IdempotencyStore,
  type RateLimitStore,
  type RequestStore,
} from '../../../core/adapter-kit.js';

/** Options of {@link mongoAdmissionStore}: the stores it composes. */
export interface MongoAdmissionStoreOptions {
  directory: DirectoryStore;
  rateLimits: RateLimitStore;
  idempotency: IdempotencyStore;
  requests: RequestStore;
}

/** Admission on MongoDB; see the module comment for its round trips and atomicity. */
export function mongoAdmissionStore({
  directory,
  rateLimits,
  idempotency,
  requests,
}: MongoAdmissionStoreOptions): AdmissionStore {
  const decided = composedAdmission({
    findPrincipal: (digest) => directory.findPrincipalByDigest(digest),
    take: (buckets, count) => rateLimits.take(buckets, count),
  });
  return admissionWithFollowUps(decided, { directory, idempotency, requests });
}

import type { Principal } from '../domain/directory.js';
import {
  type Admission,
  type AdmissionRequest,
  type AdmissionStore,
  apiKeyBucketKey,
  organizationBucketKey,
} from '../ports/admission-store.js';
import type { BucketSpec } from '../ports/rate-limit-store.js';

/** A value now, or later: memory stores answer synchronously, remote ones with a promise. */
type Eventually<T> = T | Promise<T>;

/** What {@link composedAdmission} is built from: a store's key lookup and its all-or-nothing take. */
export interface AdmissionParts {
  /** The principal of a key digest, as `DirectoryStore.findPrincipalByDigest` answers it. */
  findPrincipal(digest: string): Eventually<Principal | null>;
  /** Takes `count` tokens from every bucket or from none; the index of the first short one, or null. */
  take(buckets: readonly BucketSpec[], count: number): Eventually<number | null>;
}

/** The decision on a key that names no principal, or a revoked one: by the failed-authentication bucket. */
const refusal = (short: number | null): Admission => ({ outcome: short === null ? 'rejected' : 'blocked' });

/** The decision on a valid key: by its bucket and its organization's (0: the key's was short). */
const verdict = (principal: Principal, short: number | null): Admission =>
  short === null
    ? { outcome: 'admitted', principal }
    : { outcome: 'limited', by: short === 0 ? 'key' : 'organization', principal };

/**
 * An {@link AdmissionStore} composed of a directory lookup and a rate-limit take, for backends
 * without one script for both. When both parts answer synchronously (memory), nothing else runs
 * between the lookup and the take, so the decision is one atomic step; with asynchronous parts
 * (MongoDB) it is two or three round trips, and a key revoked between them is admitted once.
 */
export function composedAdmission(parts: AdmissionParts): AdmissionStore {
  // Each step goes on at once when its part answered synchronously (memory), without a closure or
  // a promise of its own: every API call is admitted.
  const decideFor = (
    { failedAuth, perKey, perOrganization }: AdmissionRequest,
    principal: Principal | null,
  ): Eventually<Admission> => {
    if (principal === null || principal.apiKey.revokedAt !== null) {
      const short = parts.take([failedAuth], 1);
      return short instanceof Promise ? short.then(refusal) : refusal(short);
    }
    const buckets: BucketSpec[] = [
      {
        key: apiKeyBucketKey(principal.apiKey.id),
        capacity: perKey.capacity,
        refillPerSecond: perKey.refillPerSecond,
      },
      {
        key: organizationBucketKey(principal.organization.id),
        capacity: perOrganization.capacity,
        refillPerSecond: perOrganization.refillPerSecond,
      },
    ];
    const short = parts.take(buckets, 1);
    return short instanceof Promise
      ? short.then((taken) => verdict(principal, taken))
      : verdict(principal, short);
  };
  return {
    admit(request) {
      try {
        const found = request.digest === null ? null : parts.findPrincipal(request.digest);
        const decision =
          found instanceof Promise
            ? found.then((principal) => decideFor(request, principal))
            : decideFor(request, found);
        return decision instanceof Promise ? decision : Promise.resolve(decision);
      } catch (error) {
        // A part that threw rather than rejected still answers through the promise.
        return Promise.reject(error);
      }
    },
  };
}

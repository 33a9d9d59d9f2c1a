import type { Principal } from '../domain/directory.js';
import {
  type Admission,
  type AdmissionRequest,
  type AdmissionStore,
  apiKeyBucketKey,
  type BucketRate,
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

/** A key's bucket and its organization's, as made for the rates they were made with. */
interface KeyBuckets {
  organizationId: string;
  buckets: readonly [BucketSpec, BucketSpec];
}

/** The most keys whose buckets are kept made. */
const maxKnownKeys = 4096;

/** Whether `known` are the buckets of a key of `organizationId` at these rates. */
const fits = (
  known: KeyBuckets,
  organizationId: string,
  perKey: BucketRate,
  perOrganization: BucketRate,
): boolean =>
  known.organizationId === organizationId &&
  known.buckets[0].capacity === perKey.capacity &&
  known.buckets[0].refillPerSecond === perKey.refillPerSecond &&
  known.buckets[1].capacity === perOrganization.capacity &&
  known.buckets[1].refillPerSecond === perOrganization.refillPerSecond;

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
  // The buckets of the keys seen lately, each pair made once: a request then builds no bucket and no
  // key string, and the strings carry their hashes to the buckets' look-ups from one request to the
  // next. Bounded, so that many keys cannot grow it: it starts over when full.
  const bucketsByKey = new Map<string, KeyBuckets>();
  const bucketsOf = (
    principal: Principal,
    { perKey, perOrganization }: AdmissionRequest,
  ): readonly BucketSpec[] => {
    const known = bucketsByKey.get(principal.apiKey.id);
    if (known !== undefined && fits(known, principal.organization.id, perKey, perOrganization)) {
      return known.buckets;
    }
    const made: KeyBuckets = {
      organizationId: principal.organization.id,
      buckets: [
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
      ],
    };
    if (bucketsByKey.size >= maxKnownKeys) bucketsByKey.clear();
    bucketsByKey.set(principal.apiKey.id, made);
    return made.buckets;
  };
  // Each step goes on at once when its part answered synchronously (memory), without a closure or
  // a promise of its own: every API call is admitted.
  const decideFor = (request: AdmissionRequest, principal: Principal | null): Eventually<Admission> => {
    if (principal === null || principal.apiKey.revokedAt !== null) {
      const short = parts.take([request.failedAuth], 1);
      return short instanceof Promise ? short.then(refusal) : refusal(short);
    }
    const short = parts.take(bucketsOf(principal, request), 1);
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

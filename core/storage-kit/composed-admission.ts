import type { Principal } from '../domain/directory.js';
import {
  type Admission,
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

const then = <T, R>(value: Eventually<T>, next: (resolved: T) => Eventually<R>): Eventually<R> =>
  value instanceof Promise ? value.then(next) : next(value);

/**
 * An {@link AdmissionStore} composed of a directory lookup and a rate-limit take, for backends
 * without one script for both. When both parts answer synchronously (memory), nothing else runs
 * between the lookup and the take, so the decision is one atomic step; with asynchronous parts
 * (MongoDB) it is two or three round trips, and a key revoked between them is admitted once.
 */
export function composedAdmission(parts: AdmissionParts): AdmissionStore {
  const decide = ({
    digest,
    failedAuth,
    perKey,
    perOrganization,
  }: Parameters<AdmissionStore['admit']>[0]): Eventually<Admission> =>
    then(digest === null ? null : parts.findPrincipal(digest), (principal): Eventually<Admission> => {
      if (principal === null || principal.apiKey.revokedAt !== null) {
        return then(parts.take([failedAuth], 1), (short) => ({
          outcome: short === null ? 'rejected' : 'blocked',
        }));
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
      return then(parts.take(buckets, 1), (short) =>
        short === null
          ? { outcome: 'admitted', principal }
          : { outcome: 'limited', by: short === 0 ? 'key' : 'organization', principal },
      );
    });
  return {
    admit: async (request) => decide(request),
  };
}

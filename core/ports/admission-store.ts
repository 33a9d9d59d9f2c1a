import type { Principal, User } from '../domain/directory.js';
import type { InteractiveRequest } from '../domain/interactive-request.js';
import type { IdempotencyAcquisition, IdempotencyTiming } from './idempotency-store.js';
import type { BucketSpec } from './rate-limit-store.js';
import type { DueWorkChanges } from './request-store.js';

/** The rate of a bucket whose key the store derives from the principal it finds. */
export type BucketRate = Pick<BucketSpec, 'capacity' | 'refillPerSecond'>;

/** The bucket of an API key, among the keys of the `RateLimitStore`'s buckets. */
export const apiKeyBucketKey = (apiKeyId: string): string => `key:${apiKeyId}`;

/** The bucket of an organization, among the keys of the `RateLimitStore`'s buckets. */
export const organizationBucketKey = (organizationId: string): string => `org:${organizationId}`;

/** What {@link AdmissionStore.admit} checks of one API request. */
export interface AdmissionRequest {
  /** Lowercase hex SHA-256 digest of the presented API key; null when none was presented. */
  digest: string | null;
  /**
   * The failed authentications of the client address (`auth-failures:<address>`); consulted and
   * charged only when the key is not valid.
   */
  failedAuth: BucketSpec;
  /** Rate of the key's bucket, `key:<apiKeyId>` ({@link apiKeyBucketKey}). */
  perKey: BucketRate;
  /** Rate of the organization's bucket, `org:<organizationId>` ({@link organizationBucketKey}). */
  perOrganization: BucketRate;
  /**
   * Normalized emails to look up among the users of the key's organization, as
   * `DirectoryStore.findUsersByEmail` looks them up, when the request is `admitted`: a send names its
   * recipients, and learning who they are in the admission's step spares it a round trip. Not read
   * for any other outcome.
   */
  recipientEmails?: readonly string[];
  /**
   * An idempotency key to acquire, as `IdempotencyStore.acquire` acquires it in the scope of the
   * key's organization, when the request is `admitted`: a send that carries an `Idempotency-Key`
   * learns in the admission's step whether it runs, replays or is refused, sparing it a round trip.
   * Not acted on for any other outcome.
   */
  idempotency?: IdempotencyClaim;
  /**
   * An interactive request to store when the request is `admitted`, every address of
   * `recipientEmails` (which it needs) matched a user, and the `idempotency` claim, if any, was
   * acquired under its proposed send id (a new attempt, not a repeat nor a resumed one): an
   * interactive send learns who sends it and stores its request in the admission's step, sparing it
   * a round trip. Stored as `RequestStore.createRequest` stores it, with its due work, in the key's
   * organization ({@link admittedRequest}); not when its id exists already. Not acted on otherwise.
   */
  createRequest?: RequestToCreate;
}

/** What {@link AdmissionRequest.createRequest} asks to store. */
export interface RequestToCreate {
  /** The request but for what only the admission finds: its organization and its sender. */
  request: Omit<InteractiveRequest, 'organizationId' | 'sender'>;
  /** Applied with the insert, as `RequestStore.createRequest` applies it. */
  due: DueWorkChanges;
}

/**
 * The request of {@link RequestToCreate} as sent by the admitted key's owner, in its organization.
 * Every field is named: a spread followed by more fields takes V8's slow path (see `nextVersion`).
 */
export const admittedRequest = (
  request: RequestToCreate['request'],
  principal: Principal,
): InteractiveRequest => ({
  id: request.id,
  organizationId: principal.organization.id,
  version: request.version,
  status: request.status,
  message: request.message,
  options: request.options,
  mode: request.mode,
  timeoutMinutes: request.timeoutMinutes,
  createdAt: request.createdAt,
  expiresAt: request.expiresAt,
  finishedAt: request.finishedAt,
  externalReferenceId: request.externalReferenceId,
  sender: { userId: principal.user.id, name: principal.user.name },
  callback: request.callback,
  recipients: request.recipients,
});

/** What {@link AdmissionRequest.idempotency} asks to acquire: the arguments of `IdempotencyStore.acquire`. */
export interface IdempotencyClaim {
  /** The `Idempotency-Key` as presented; its organization is the admitted key's. */
  key: string;
  fingerprint: string;
  /** The id the caller proposes to send under. */
  sendId: string;
  timing: IdempotencyTiming;
}

/** What {@link AdmissionStore.admit} decided. */
export type Admission =
  /** No valid key, and the client address has no failed-authentication token left; nothing was taken. */
  | { outcome: 'blocked' }
  /** No key, or an unknown or revoked one; one failed-authentication token was taken. */
  | { outcome: 'rejected' }
  /** A valid key whose own bucket (`key`) or organization's bucket is short; nothing was taken. */
  | { outcome: 'limited'; by: 'key' | 'organization'; principal: Principal }
  /**
   * A valid key; one token was taken from the key's bucket and one from the organization's. `users`:
   * the users found for `recipientEmails` (as `findUsersByEmail` answers them), present exactly when
   * the request gave them. `idempotency`: what acquiring the request's `idempotency` claim found,
   * present exactly when the request gave one. `created`: whether the request's `createRequest` was
   * stored, present exactly when the request gave one.
   */
  | {
      outcome: 'admitted';
      principal: Principal;
      users?: User[];
      idempotency?: IdempotencyAcquisition;
      created?: boolean;
    };

/**
 * The gate of every API request (docs/behaviour.md#rate-limits, docs/behaviour.md#api-keys): authentication and both rate limits in one
 * step. The buckets are those of the `RateLimitStore` (same keys, same arithmetic, refilled by
 * the store's clock); the key is read as `DirectoryStore.findPrincipalByDigest` reads it, never
 * from a cache, so a revocation holds on the very next request.
 */
export interface AdmissionStore {
  /**
   * Looks the digest up. A valid key (known, `revokedAt` unset) is judged by its own buckets only,
   * whatever the state of `failedAuth`, which it neither reads nor charges: takes one token from the
   * key's bucket and one from the organization's, both or neither (a refusal by one costs the other
   * nothing): `admitted`, or `limited` by the first that was short. No digest, an unknown one, or a
   * revoked key takes one token from `failedAuth`: `rejected`, or `blocked` (taking nothing) when it
   * holds less than one. So an address that spent its failures (all the clients behind one proxy,
   * say) still reaches the service with valid keys, while guesses stay slowed.
   *
   * Atomicity and round trips are the adapter's: memory and Redis decide in one atomic step (Redis in
   * one round trip, the lookup of `recipientEmails` included); MongoDB composes its directory and
   * rate-limit operations (see its adapter). The lookup of the recipients need not be atomic with the
   * decision: it reads, after it, what `findUsersByEmail` would; the acquisition of `idempotency`
   * need not be either: it is, after it, what `IdempotencyStore.acquire` would do; nor the insert of
   * `createRequest`: it is, after both, what `RequestStore.createRequest` would do.
   */
  admit: (request: AdmissionRequest) => Promise<Admission>;
}

import type { CoreContext } from '../context.js';
import type { Principal, User } from '../domain/directory.js';
import { NotifyError } from '../errors.js';
import { attemptNetwork } from '../http/client-address.js';
import type { Admission, AdmissionRequest } from '../ports/admission-store.js';
import type { IdempotencyAcquisition } from '../ports/idempotency-store.js';
import type { BucketSpec } from '../ports/rate-limit-store.js';
import type { RateLimit } from '../rate-limit/settings.js';
import { digestApiKey } from '../security/api-key-format.js';

/** `lastUsedAt` is written at most this often per key: accurate to a minute without a write per call. */
const touchIntervalMs = 60_000;

const failedAuthBucket = (context: CoreContext, clientAddress: string): BucketSpec => ({
  key: `auth-failures:${attemptNetwork(clientAddress)}`,
  capacity: context.rateLimits.failedAuthentication.burst,
  refillPerSecond: context.rateLimits.failedAuthentication.perSecond,
});

const blocked = () =>
  new NotifyError('rate_limited', 'Too many failed authentication attempts from this address', {
    retryAfterSeconds: 1,
  });

const rejected = (presented: string | undefined) =>
  new NotifyError('unauthenticated', presented ? 'Invalid API key' : 'Missing API key');

const rate = (limit: RateLimit) => ({ capacity: limit.burst, refillPerSecond: limit.perSecond });

const describe = (limit: RateLimit) => `(${limit.burst} burst / ${limit.perSecond} per second)`;

/**
 * Resolves the caller from `X-API-Key`, without charging the request limits (the library's
 * `authenticate`). The key is compared exactly as presented (no trimming). A valid key is never
 * refused for its client address; an invalid one takes a token from the address's failed
 * authentications, and is refused with 429 rather than 401 once they run out, so that keys cannot
 * be guessed at speed.
 */
export async function authenticate(
  context: CoreContext,
  apiKey: string | undefined,
  clientAddress: string,
): Promise<Principal> {
  const principal = apiKey
    ? await context.storage.directory.findPrincipalByDigest(digestApiKey(apiKey))
    : null;
  if (principal && principal.apiKey.revokedAt === null) {
    touch(context, principal);
    return principal;
  }
  const short = await context.storage.rateLimits.take([failedAuthBucket(context, clientAddress)], 1);
  throw short === null ? rejected(apiKey) : blocked();
}

/** An admitted request: its caller, the users found for the addresses it named, and its idempotency key's acquisition. */
export interface AdmittedRequest {
  principal: Principal;
  /**
   * The users of the caller's organization matching `recipientEmails`; absent when none were given
   * (or the store did not look them up: then the caller looks them up itself).
   */
  users?: User[];
  /**
   * What acquiring the `idempotency` claim found; absent when none was given (or the store did not
   * acquire it: then the caller acquires it itself).
   */
  idempotency?: IdempotencyAcquisition;
  /** Whether the `createRequest` given was stored; absent when none was given. */
  created?: boolean;
}

/** What an admission does in its storage step besides deciding, once the request is admitted. */
export type AdmissionExtras = Pick<AdmissionRequest, 'recipientEmails' | 'idempotency' | 'createRequest'>;

/**
 * Admits an API request (docs/behaviour.md#rate-limits, docs/behaviour.md#idempotency):
 * authenticates it as {@link authenticate} does, then takes one token from the key's bucket and one
 * from the organization's, both or neither, refusing with the specification's exact wording when
 * either is empty. Once it is admitted, does the `extras` in the same storage step: looks up the
 * users of its organization whose normalized addresses are `recipientEmails`, acquires its
 * idempotency key and stores its interactive request (a send's: a round trip fewer for each).
 */
export function admitWithExtras(
  context: CoreContext,
  apiKey: string | undefined,
  clientAddress: string,
  extras: AdmissionExtras = {},
): Promise<AdmittedRequest> {
  const { perKey, perOrganization } = context.rateLimits;
  const request: AdmissionRequest = {
    digest: apiKey ? digestApiKey(apiKey) : null,
    failedAuth: failedAuthBucket(context, clientAddress),
    perKey: rate(perKey),
    perOrganization: rate(perOrganization),
  };
  if (extras.recipientEmails !== undefined) request.recipientEmails = extras.recipientEmails;
  if (extras.idempotency !== undefined) request.idempotency = extras.idempotency;
  if (extras.createRequest !== undefined) request.createRequest = extras.createRequest;
  // Every API call is admitted: its decision is answered without an asynchronous step of its own.
  let decided: Promise<Admission>;
  try {
    decided = context.storage.admission.admit(request);
  } catch (error) {
    // A store that threw rather than rejected still answers through the promise.
    return Promise.reject(error);
  }
  return decided.then((admission) => admitted(context, apiKey, admission));
}

/** The admitted request of an admission's decision. @throws NotifyError when it refused the request. */
function admitted(context: CoreContext, apiKey: string | undefined, admission: Admission): AdmittedRequest {
  const { perKey, perOrganization } = context.rateLimits;
  switch (admission.outcome) {
    case 'blocked':
      throw blocked();
    case 'rejected':
      throw rejected(apiKey);
    case 'limited': {
      // The key was used, even if the request goes no further.
      touch(context, admission.principal);
      const details =
        admission.by === 'key'
          ? `Per-key rate limit exceeded ${describe(perKey)}`
          : `Per-organization rate limit exceeded ${describe(perOrganization)}`;
      throw new NotifyError('rate_limited', details, { retryAfterSeconds: 1 });
    }
    case 'admitted': {
      touch(context, admission.principal);
      // Field by field rather than through spreads of empty objects: every API call is admitted.
      const request: AdmittedRequest = { principal: admission.principal };
      if (admission.users !== undefined) request.users = admission.users;
      if (admission.idempotency !== undefined) request.idempotency = admission.idempotency;
      if (admission.created !== undefined) request.created = admission.created;
      return request;
    }
  }
}

function touch(context: CoreContext, principal: Principal): void {
  const now = context.clock.now();
  const last = principal.apiKey.lastUsedAt;
  if (last !== null && now - last < touchIntervalMs) return;
  context.storage.directory.touchApiKey(principal.apiKey.id, now).catch((error: unknown) => {
    context.logger.warn('could not record the last use of an API key', {
      keyId: principal.apiKey.id,
      error: String(error),
    });
  });
}

import type { CoreContext } from '../context.js';
import type { Principal } from '../domain/directory.js';
import { NotifyError } from '../errors.js';
import type { BucketSpec } from '../ports/rate-limit-store.js';
import { digestApiKey } from '../security/api-key-format.js';

/** `lastUsedAt` is written at most this often per key: accurate to a minute without a write per call. */
const touchIntervalMs = 60_000;

const failedAuthBucket = (context: CoreContext, clientAddress: string): BucketSpec => ({
  key: `auth-failures:${clientAddress}`,
  capacity: context.rateLimits.failedAuthentication.burst,
  refillPerSecond: context.rateLimits.failedAuthentication.perSecond,
});

/**
 * Resolves the caller from `X-API-Key`. A client address that failed too often is refused before
 * its key is even looked at, so that keys cannot be guessed at speed; the check runs alongside the
 * lookup to keep the successful path at one round trip of latency.
 */
export async function authenticate(
  context: CoreContext,
  apiKey: string | undefined,
  clientAddress: string,
): Promise<Principal> {
  const bucket = failedAuthBucket(context, clientAddress);
  const presented = apiKey?.trim();
  const [blocked, principal] = await Promise.all([
    context.storage.rateLimits.take([bucket], 0),
    presented ? context.storage.directory.findPrincipalByDigest(digestApiKey(presented)) : null,
  ]);
  if (blocked !== null) {
    throw new NotifyError('rate_limited', 'Too many failed authentication attempts from this address', {
      retryAfterSeconds: 1,
    });
  }
  if (principal && principal.apiKey.revokedAt === null) {
    touch(context, principal);
    return principal;
  }
  await context.storage.rateLimits.take([bucket], 1);
  throw new NotifyError('unauthenticated', presented ? 'Invalid API key' : 'Missing API key');
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

import type { CoreContext } from '../context.js';
import type { Principal } from '../domain/directory.js';
import { NotifyError } from '../errors.js';
import type { RateLimit } from '../rate-limit/settings.js';

const describe = (limit: RateLimit) => `(${limit.burst} burst / ${limit.perSecond} per second)`;

/**
 * Takes one token from the key's bucket and one from the organization's, both or neither
 * (DECISIONS §6), and refuses with the specification's exact wording when either is empty.
 */
export async function enforceRateLimit(context: CoreContext, principal: Principal): Promise<void> {
  const { perKey, perOrganization } = context.rateLimits;
  const refused = await context.storage.rateLimits.take(
    [
      { key: `key:${principal.apiKey.id}`, capacity: perKey.burst, refillPerSecond: perKey.perSecond },
      {
        key: `org:${principal.organization.id}`,
        capacity: perOrganization.burst,
        refillPerSecond: perOrganization.perSecond,
      },
    ],
    1,
  );
  if (refused === null) return;
  const details =
    refused === 0
      ? `Per-key rate limit exceeded ${describe(perKey)}`
      : `Per-organization rate limit exceeded ${describe(perOrganization)}`;
  throw new NotifyError('rate_limited', details, { retryAfterSeconds: 1 });
}

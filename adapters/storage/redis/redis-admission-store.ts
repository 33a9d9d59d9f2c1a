import {
  type Admission,
  type AdmissionStore,
  apiKeyBucketKey,
  organizationBucketKey,
} from '../../../core/adapter-kit.js';
import { encodeDueChanges } from './due-changes.js';
import { admitScript } from './lua/admission-lua.js';
import { principalFrom, principalKeys, usersFrom } from './redis-directory-store.js';
import { acquireArguments, acquisitionFrom } from './redis-idempotency-store.js';
import type { RedisKeys } from './redis-keys.js';
import type { RedisRunner } from './redis-runner.js';
import { asArray, asString } from './replies.js';
import { encodeRequestAfterSender } from './request-format.js';

/**
 * Admission in one script, so one round trip: the key lookup (never cached: a revocation holds on the
 * next request of every instance), then both buckets of a valid key, all or nothing, or the
 * failed-authentication bucket of an invalid one, on the Redis server's clock, with the buckets and
 * arithmetic of the rate-limit store; then, when admitted, the recipients' lookup of the directory
 * store, on the same keys, and the acquisition of its idempotency claim as the idempotency store
 * acquires it, and the insert of its interactive request as the request store inserts it.
 */
export function redisAdmissionStore(redis: RedisRunner, keys: RedisKeys): AdmissionStore {
  // The script learns the ids from the key it finds, and appends them to these.
  const keyBucketBase = keys.rateLimit(apiKeyBucketKey(''));
  const organizationBucketBase = keys.rateLimit(organizationBucketKey(''));

  return {
    async admit({
      digest,
      failedAuth,
      perKey,
      perOrganization,
      recipientEmails,
      idempotency,
      createRequest,
    }): Promise<Admission> {
      const [outcome, ...found] = asArray(
        await redis.evalScript(
          admitScript,
          [...principalKeys(keys), keys.rateLimit(failedAuth.key), keys.usersByEmail],
          [
            digest ?? '',
            String(failedAuth.capacity),
            String(failedAuth.refillPerSecond),
            keyBucketBase,
            String(perKey.capacity),
            String(perKey.refillPerSecond),
            organizationBucketBase,
            String(perOrganization.capacity),
            String(perOrganization.refillPerSecond),
            recipientEmails === undefined ? '' : '1',
            ...(idempotency === undefined
              ? ['', '', '', '', '', '', '', '']
              : [
                  '1',
                  keys.idempotencyBase,
                  JSON.stringify(idempotency.key),
                  idempotency.fingerprint,
                  ...acquireArguments(idempotency.sendId, idempotency.timing),
                ]),
            ...(createRequest === undefined
              ? ['', '', '', '', '', '', '']
              : [
                  '1',
                  keys.request(createRequest.request.id),
                  encodeRequestAfterSender(createRequest.request),
                  String(createRequest.request.version),
                  keys.dueItemBase,
                  keys.due,
                  keys.sequence,
                ]),
            String(recipientEmails?.length ?? 0),
            ...(recipientEmails ?? []).map((email) => JSON.stringify(email)),
            ...(createRequest === undefined ? [] : encodeDueChanges(createRequest.due)),
          ],
        ),
      );
      // The principal's tuple has five entries; when admitted, the acquisition, whether the request
      // was created and the users found follow it.
      const principal = found.slice(0, 5);
      switch (asString(outcome)) {
        case 'blocked':
          return { outcome: 'blocked' };
        case 'rejected':
          return { outcome: 'rejected' };
        case 'admitted':
          return {
            outcome: 'admitted',
            principal: principalFrom(principal),
            ...(recipientEmails === undefined ? {} : { users: usersFrom(found.slice(7)) }),
            ...(idempotency === undefined ? {} : { idempotency: acquisitionFrom(found[5]) }),
            ...(createRequest === undefined ? {} : { created: asString(found[6]) === '1' }),
          };
        case 'limited-key':
          return { outcome: 'limited', by: 'key', principal: principalFrom(principal) };
        case 'limited-organization':
          return { outcome: 'limited', by: 'organization', principal: principalFrom(principal) };
        default:
          throw new Error(`Unexpected admission outcome from Redis: ${String(outcome)}`);
      }
    },
  } satisfies AdmissionStore;
}

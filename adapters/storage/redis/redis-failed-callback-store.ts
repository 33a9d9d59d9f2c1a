import type { FailedCallback, FailedCallbackStore } from '../../../core/adapter-kit.js';
import {
  addFailureScript,
  getFailureScript,
  listFailuresScript,
  takeFailureScript,
} from './lua/failed-callback-lua.js';
import type { RedisKeys } from './redis-keys.js';
import type { RedisRunner } from './redis-runner.js';
import { asArray, asOptionalString, parseJson } from './replies.js';
import { encodeTtl } from './ttl-argument.js';

/**
 * Failed callbacks in a hash by request id, ordered by a sorted set of failure sequence numbers, and
 * expiring by a sorted set of expiry times (the server's clock): each write forgets some expired
 * failures, and each listing all of them. Listing one organization filters the whole list: failures
 * are few and read by operators only.
 */
export function redisFailedCallbackStore(redis: RedisRunner, keys: RedisKeys): FailedCallbackStore {
  const { failedCallbacks, failedCallbackOrder, failedCallbackExpiry } = keys;
  const all = [failedCallbacks, failedCallbackOrder, failedCallbackExpiry];
  return {
    async add(failure, options) {
      await redis.evalScript(
        addFailureScript,
        [failedCallbacks, failedCallbackOrder, keys.sequence, failedCallbackExpiry],
        [failure.requestId, JSON.stringify(failure), encodeTtl(options)],
      );
    },
    async list(organizationId) {
      const failures = asArray(await redis.evalScript(listFailuresScript, all, [])).map((json) =>
        parseJson<FailedCallback>(json),
      );
      return organizationId === undefined
        ? failures
        : failures.filter((failure) => failure.organizationId === organizationId);
    },
    async get(requestId) {
      const json = asOptionalString(
        await redis.evalScript(getFailureScript, [failedCallbacks, failedCallbackExpiry], [requestId]),
      );
      return json === null ? null : parseJson<FailedCallback>(json);
    },
    async take(requestId) {
      const json = asOptionalString(await redis.evalScript(takeFailureScript, all, [requestId]));
      return json === null ? null : parseJson<FailedCallback>(json);
    },
  } satisfies FailedCallbackStore;
}

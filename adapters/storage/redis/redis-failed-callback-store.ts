import type { FailedCallback, FailedCallbackStore } from '../../../core/adapter-kit.js';
import { addFailureScript, listFailuresScript, takeFailureScript } from './lua/failed-callback-lua.js';
import type { RedisKeys } from './redis-keys.js';
import type { RedisRunner } from './redis-runner.js';
import { asArray, asOptionalString, parseJson } from './replies.js';

/**
 * Failed callbacks in a hash by request id, ordered by a sorted set of failure sequence numbers.
 * Listing one organization filters the whole list: failures are few and read by operators only.
 */
export function redisFailedCallbackStore(redis: RedisRunner, keys: RedisKeys): FailedCallbackStore {
  const both = [keys.failedCallbacks, keys.failedCallbackOrder];
  return {
    async add(failure) {
      await redis.evalScript(
        addFailureScript,
        [...both, keys.sequence],
        [failure.requestId, JSON.stringify(failure)],
      );
    },
    async list(organizationId) {
      const failures = asArray(await redis.evalScript(listFailuresScript, both, [])).map((json) =>
        parseJson<FailedCallback>(json),
      );
      return organizationId === undefined
        ? failures
        : failures.filter((failure) => failure.organizationId === organizationId);
    },
    async get(requestId) {
      const json = asOptionalString(await redis.command(['HGET', keys.failedCallbacks, requestId]));
      return json === null ? null : parseJson<FailedCallback>(json);
    },
    async take(requestId) {
      const json = asOptionalString(await redis.evalScript(takeFailureScript, both, [requestId]));
      return json === null ? null : (JSON.parse(json) as FailedCallback);
    },
  } satisfies FailedCallbackStore;
}

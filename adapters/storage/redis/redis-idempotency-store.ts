import type {
  IdempotencyAcquisition,
  IdempotencyScope,
  IdempotencyStore,
  IdempotencyTiming,
} from '../../../core/adapter-kit.js';
import {
  acquireScript,
  completeIdempotencyScript,
  failIdempotencyScript,
  releaseIdempotencyScript,
  renewIdempotencyScript,
} from './lua/idempotency-lua.js';
import type { RedisKeys } from './redis-keys.js';
import type { RedisRunner } from './redis-runner.js';
import { asArray, asString } from './replies.js';

/** The acquisition that the Lua `acquire` answered. */
export function acquisitionFrom(reply: unknown): IdempotencyAcquisition {
  const [outcome, ...rest] = asArray(reply);
  const name = asString(outcome);
  switch (name) {
    case 'acquired':
      return { outcome: name, sendId: asString(rest[0]) };
    case 'completed':
      return { outcome: name, response: { status: Number(asString(rest[0])), body: asString(rest[1]) } };
    case 'busy':
    case 'mismatch':
      return { outcome: name };
    default:
      throw new Error(`Unexpected idempotency outcome from Redis: ${name}`);
  }
}

/** `acquire`'s ARGV after the fingerprint: the caller's now, lease end, ttl and proposed send id. */
export function acquireArguments(sendId: string, { now, leaseMs, ttlMs }: IdempotencyTiming): string[] {
  // PEXPIRE takes whole milliseconds; rounding up never forgets a record early.
  return [String(now), String(now + leaseMs), String(Math.max(1, Math.ceil(ttlMs))), sendId];
}

/**
 * Idempotency records as hashes that Redis expires `ttlMs` after creation. Every transition is one
 * script, so two instances can never both acquire a key. Leases are judged by the caller's
 * `timing.now`, expiry by the Redis server's clock, as the memory adapter does with its own clock.
 */
export function redisIdempotencyStore(redis: RedisRunner, keys: RedisKeys): IdempotencyStore {
  const recordKey = (scope: IdempotencyScope): string[] => [
    keys.idempotency(scope.organizationId, scope.key),
  ];

  return {
    async acquire(scope, fingerprint, sendId, timing) {
      return acquisitionFrom(
        await redis.evalScript(acquireScript, recordKey(scope), [
          fingerprint,
          ...acquireArguments(sendId, timing),
        ]),
      );
    },
    async renew(scope, holder, { now, leaseMs }) {
      await redis.evalScript(renewIdempotencyScript, recordKey(scope), [holder, String(now + leaseMs)]);
    },
    async complete(scope, holder, response) {
      await redis.evalScript(completeIdempotencyScript, recordKey(scope), [
        holder,
        String(response.status),
        response.body,
      ]);
    },
    async fail(scope, holder) {
      await redis.evalScript(failIdempotencyScript, recordKey(scope), [holder]);
    },
    async release(scope, holder) {
      await redis.evalScript(releaseIdempotencyScript, recordKey(scope), [holder]);
    },
  } satisfies IdempotencyStore;
}

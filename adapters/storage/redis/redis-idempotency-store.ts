import type { IdempotencyScope, IdempotencyStore } from '../../../core/adapter-kit.js';
import { acquireScript, completeIdempotencyScript, failIdempotencyScript } from './lua/idempotency-lua.js';
import type { RedisKeys } from './redis-keys.js';
import type { RedisRunner } from './redis-runner.js';
import { asArray, asString } from './replies.js';

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
    async acquire(scope, fingerprint, sendId, { now, leaseMs, ttlMs }) {
      // PEXPIRE takes whole milliseconds; rounding up never forgets a record early.
      const ttl = String(Math.max(1, Math.ceil(ttlMs)));
      const reply = asArray(
        await redis.evalScript(acquireScript, recordKey(scope), [
          fingerprint,
          String(now),
          String(now + leaseMs),
          ttl,
          sendId,
        ]),
      );
      const outcome = asString(reply[0]);
      switch (outcome) {
        case 'acquired':
          return { outcome, sendId: asString(reply[1]) };
        case 'completed':
          return { outcome, response: { status: Number(asString(reply[1])), body: asString(reply[2]) } };
        case 'busy':
        case 'mismatch':
          return { outcome };
        default:
          throw new Error(`Unexpected idempotency outcome from Redis: ${outcome}`);
      }
    },
    async complete(scope, response) {
      await redis.evalScript(completeIdempotencyScript, recordKey(scope), [
        String(response.status),
        response.body,
      ]);
    },
    async fail(scope) {
      await redis.evalScript(failIdempotencyScript, recordKey(scope), []);
    },
  } satisfies IdempotencyStore;
}

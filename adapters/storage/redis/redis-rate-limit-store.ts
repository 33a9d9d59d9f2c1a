import type { RateLimitStore } from '../../../core/adapter-kit.js';
import { takeTokensScript } from './lua/rate-limit-lua.js';
import type { RedisKeys } from './redis-keys.js';
import type { RedisRunner } from './redis-runner.js';

/**
 * Token buckets shared by every instance on one Redis: one script takes from all buckets or none, on
 * the Redis server's clock, so limits hold across instances whatever their clocks say.
 */
export function redisRateLimitStore(redis: RedisRunner, keys: RedisKeys): RateLimitStore {
  return {
    async take(buckets, cost) {
      // The same refusal as the shared arithmetic, before any round trip.
      if (!Number.isFinite(cost) || cost < 0)
        throw new RangeError(`cost must be a finite number >= 0, got ${cost}`);
      if (buckets.length === 0) return null;
      const reply = await redis.evalScript(
        takeTokensScript,
        buckets.map((bucket) => keys.rateLimit(bucket.key)),
        [
          String(cost),
          ...buckets.flatMap((bucket) => [String(bucket.capacity), String(bucket.refillPerSecond)]),
        ],
      );
      return reply === null ? null : Number(reply);
    },
  } satisfies RateLimitStore;
}

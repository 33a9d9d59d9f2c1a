import type { Clock } from '../../../core/ports/clock.js';
import type { RateLimitStore } from '../../../core/ports/rate-limit-store.js';
import { type BucketState, fullAt, takeTokens } from '../../../core/rate-limit/token-bucket.js';
import { createLazySweep } from './lazy-sweep.js';

/** Options of {@link memoryRateLimitStore}. */
export interface MemoryRateLimitStoreOptions {
  /** Decides the refill. */
  clock: Clock;
}

/** A bucket's state and when it will be full again, after which forgetting it changes nothing. */
interface Stored {
  state: BucketState;
  fullAt: number;
}

/**
 * Token buckets in a map, computed by the shared token-bucket arithmetic. Buckets that have refilled
 * completely are forgotten lazily (an absent bucket is a full one), so keys seen once, such as the
 * client addresses of failed logins, do not accumulate.
 */
export function memoryRateLimitStore({ clock }: MemoryRateLimitStoreOptions): RateLimitStore {
  const buckets = new Map<string, Stored>();
  const sweep = createLazySweep(buckets, (stored: Stored, now) => stored.fullAt <= now);

  return {
    async take(specs, cost) {
      const now = clock.now();
      const { shortIndex, updates } = takeTokens(specs, cost, (key) => buckets.get(key)?.state, now);
      for (const spec of specs) {
        const state = updates.get(spec.key);
        if (state !== undefined) buckets.set(spec.key, { state, fullAt: fullAt(state, spec) });
      }
      sweep(now);
      return shortIndex;
    },
  } satisfies RateLimitStore;
}

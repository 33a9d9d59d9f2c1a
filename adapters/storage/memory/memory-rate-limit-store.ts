import {
  type BucketSpec,
  type BucketState,
  type Clock,
  fullAt,
  type RateLimitStore,
  takeTokens,
} from '../../../core/adapter-kit.js';
import { createLazySweep } from './lazy-sweep.js';

/** Options of {@link memoryRateLimitStore}. */
export interface MemoryRateLimitStoreOptions {
  /** Decides the refill. */
  clock: Clock;
}

/** The memory rate-limit store, plus the synchronous take that lets the admission store decide in one step. */
export interface MemoryRateLimitStore extends RateLimitStore {
  /** `take`, at once. */
  takeNow(buckets: readonly BucketSpec[], cost: number): number | null;
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
export function memoryRateLimitStore({ clock }: MemoryRateLimitStoreOptions): MemoryRateLimitStore {
  const buckets = new Map<string, Stored>();
  const sweep = createLazySweep(buckets, (stored: Stored, now) => stored.fullAt <= now, clock);

  const takeNow = (specs: readonly BucketSpec[], cost: number): number | null => {
    const now = clock.now();
    const { shortIndex, updates } = takeTokens(specs, cost, (key) => buckets.get(key)?.state, now);
    for (const spec of specs) {
      const state = updates.get(spec.key);
      if (state !== undefined) buckets.set(spec.key, { state, fullAt: fullAt(state, spec) });
    }
    sweep();
    return shortIndex;
  };

  return {
    takeNow,
    take: async (specs, cost) => takeNow(specs, cost),
  } satisfies MemoryRateLimitStore;
}

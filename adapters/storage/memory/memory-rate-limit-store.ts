import {
  type BucketSpec,
  type BucketState,
  type Clock,
  fullAt,
  type RateLimitStore,
  refill,
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

  /** The shared arithmetic's take, through its copies: it charges a bucket named twice twice. */
  const takeThroughCopies = (specs: readonly BucketSpec[], cost: number, now: number): number | null => {
    const { shortIndex, updates } = takeTokens(specs, cost, (key) => buckets.get(key)?.state, now);
    for (const spec of specs) {
      const state = updates.get(spec.key);
      if (state !== undefined) buckets.set(spec.key, { state, fullAt: fullAt(state, spec) });
    }
    return shortIndex;
  };

  /** The states a take refilled, reused from take to take: a take runs to its end before another starts. */
  const refilled: BucketState[] = [];

  /**
   * The same take when no bucket is named twice, as every API call's is (its key's, its
   * organization's): each refilled by the shared arithmetic, all checked, then each charged in
   * place, without the map of updates and the copies that charging a bucket twice needs.
   */
  const takeInPlace = (specs: readonly BucketSpec[], cost: number, now: number): number | null => {
    const needed = cost === 0 ? 1 : cost;
    refilled.length = 0;
    for (const spec of specs) {
      const state = refill(buckets.get(spec.key)?.state, spec, now);
      if (state.tokens < needed) return refilled.length;
      refilled.push(state);
    }
    let index = 0;
    for (const spec of specs) {
      const state = refilled[index];
      index += 1;
      if (state === undefined) continue;
      state.tokens -= cost;
      const stored = buckets.get(spec.key);
      if (stored === undefined) buckets.set(spec.key, { state, fullAt: fullAt(state, spec) });
      else {
        stored.state = state;
        stored.fullAt = fullAt(state, spec);
      }
    }
    return null;
  };

  const takeNow = (specs: readonly BucketSpec[], cost: number): number | null => {
    const now = clock.now();
    const shortIndex =
      Number.isFinite(cost) && cost >= 0 && namesEachOnce(specs)
        ? takeInPlace(specs, cost, now)
        : takeThroughCopies(specs, cost, now);
    sweep();
    return shortIndex;
  };

  return {
    takeNow,
    take: async (specs, cost) => takeNow(specs, cost),
  } satisfies MemoryRateLimitStore;
}

/** Whether no two of `specs` name the same bucket. */
function namesEachOnce(specs: readonly BucketSpec[]): boolean {
  for (let index = 1; index < specs.length; index += 1) {
    const key = specs[index]?.key;
    for (let earlier = 0; earlier < index; earlier += 1) if (specs[earlier]?.key === key) return false;
  }
  return true;
}

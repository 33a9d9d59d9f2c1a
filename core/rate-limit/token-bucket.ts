import type { BucketSpec } from '../ports/rate-limit-store.js';

/**
 * Pure token-bucket arithmetic, shared by every `RateLimitStore` adapter: the memory adapter
 * calls it directly, and the Redis Lua script mirrors it line for line, so both refill and refuse
 * identically. Tokens are continuous (fractions accumulate); time is epoch milliseconds.
 *
 * @module
 */

/** The stored state of one bucket. An absent state is a full bucket. */
export interface BucketState {
  /** Tokens left at `updatedAt`, between 0 and the capacity. */
  tokens: number;
  /** Epoch milliseconds the state was computed at. */
  updatedAt: number;
}

/** The shape of a bucket that the arithmetic needs; a {@link BucketSpec} satisfies it. */
export type BucketShape = Pick<BucketSpec, 'capacity' | 'refillPerSecond'>;

/** Result of {@link takeTokens}. */
export interface TakeResult {
  /** Index of the first bucket that was short, or null when the tokens were taken. */
  shortIndex: number | null;
  /** States to store, by key: every bucket after the take, or empty when it was refused. */
  updates: Map<string, BucketState>;
}

/**
 * The state of a bucket at `now`: refilled at `refillPerSecond` since `updatedAt`, never beyond
 * `capacity`. A missing state is a new bucket, which starts full.
 */
export function refill(state: BucketState | undefined, shape: BucketShape, now: number): BucketState {
  if (state === undefined) return { tokens: shape.capacity, updatedAt: now };
  // A clock that steps back must neither drain the bucket nor, once it steps forward again, count the
  // same interval twice; so elapsed time is never negative and updatedAt never moves backwards.
  const elapsedMs = Math.max(0, now - state.updatedAt);
  // Multiplying before dividing keeps whole-millisecond refills exact (200 ms at 5/s is exactly 1).
  const tokens = Math.min(shape.capacity, state.tokens + (elapsedMs * shape.refillPerSecond) / 1000);
  return { tokens, updatedAt: Math.max(now, state.updatedAt) };
}

/**
 * All-or-nothing take over several buckets, the semantics of `RateLimitStore.take`: when every
 * bucket holds at least `cost` tokens (at least one when `cost` is 0, which takes none), takes `cost`
 * from each; otherwise takes nothing and reports the first bucket that was short.
 *
 * A key listed twice is charged twice, each check seeing the earlier charge, so a repeated key can
 * never let a caller spend more than one bucket holds.
 *
 * @param lookup the stored state of a key, or undefined for a bucket never used (or forgotten).
 * @throws RangeError when `cost` is negative or not finite.
 */
export function takeTokens(
  buckets: readonly BucketSpec[],
  cost: number,
  lookup: (key: string) => BucketState | undefined,
  now: number,
): TakeResult {
  if (!Number.isFinite(cost) || cost < 0)
    throw new RangeError(`cost must be a finite number >= 0, got ${cost}`);
  const needed = cost === 0 ? 1 : cost;
  const updates = new Map<string, BucketState>();
  for (const [index, bucket] of buckets.entries()) {
    const current = refill(updates.get(bucket.key) ?? lookup(bucket.key), bucket, now);
    if (current.tokens < needed) return { shortIndex: index, updates: new Map() };
    updates.set(bucket.key, { tokens: current.tokens - cost, updatedAt: current.updatedAt });
  }
  return { shortIndex: null, updates };
}

/**
 * Epoch milliseconds at which a bucket will be full again, so that a store may forget its state then
 * (a forgotten state reads as full). Infinity when the bucket never refills.
 */
export function fullAt(state: BucketState, shape: BucketShape): number {
  const missing = shape.capacity - state.tokens;
  if (missing <= 0) return state.updatedAt;
  if (shape.refillPerSecond <= 0) return Number.POSITIVE_INFINITY;
  return state.updatedAt + Math.ceil((missing * 1000) / shape.refillPerSecond);
}

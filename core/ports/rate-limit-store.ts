/** A token bucket: `capacity` tokens, refilled continuously at `refillPerSecond`. */
export interface BucketSpec {
  key: string;
  capacity: number;
  refillPerSecond: number;
}

/** Token buckets shared by every instance that uses the same store. */
export interface RateLimitStore {
  /**
   * Atomically over all `buckets`: when each holds at least `cost` tokens (at least one when `cost`
   * is 0), takes `cost` from each and answers null; otherwise takes nothing and answers the index of
   * the first bucket that was short. The store's own clock decides the refill.
   */
  take: (buckets: readonly BucketSpec[], cost: number) => Promise<number | null>;
}

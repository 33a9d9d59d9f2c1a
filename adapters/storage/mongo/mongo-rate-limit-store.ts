/**
 * Token buckets in MongoDB, one document per bucket key, computed by the server's clock (`$$NOW`) so
 * that every instance refills alike. The arithmetic is that of `core/rate-limit/token-bucket.ts`,
 * written as an update pipeline: refill since `updatedAt` (never for negative elapsed time, never
 * beyond the capacity), then take `cost` only if at least `cost` (1 when `cost` is 0) is there.
 *
 * Atomicity scheme. Each bucket's check-and-take is one `findOneAndUpdate` upsert: concurrent takes
 * from one bucket, from any number of instances, never spend more than it holds. A successful take
 * writes a fresh `taker` token, by which the caller recognizes its own take in the record it reads
 * back.
 *
 * Not atomic across buckets: MongoDB has no single-document way to update two documents, and the
 * buckets of one call (the API key's and the organization's) are shared with other calls, so they
 * cannot live in one document. `take` is therefore take-then-compensate: it takes from the buckets in
 * order, and when one is short, gives back what it took from the earlier ones (capped at their
 * capacity, as if never taken) and answers that bucket's index. Sequentially this is exactly the
 * all-or-nothing behaviour of the port. Under concurrency, a call may be refused because another
 * call held tokens for the moment between its take and its give-back (never the reverse: no bucket
 * ever spends more than it holds), and a process that dies in that moment loses the tokens it held
 * until they refill. Both err on the side of refusing.
 *
 * A full bucket is forgotten: `expiresAt` is when it will be full again, and a TTL index deletes it
 * then (an absent bucket reads as full).
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { Collection, Document } from 'mongodb';
import type { BucketSpec, RateLimitStore } from '../../../core/adapter-kit.js';
import type { BucketDocument } from './collections.js';
import { guardMongoStore, isDuplicateKeyError } from './unavailable.js';

/** Options of {@link mongoRateLimitStore}. */
export interface MongoRateLimitStoreOptions {
  rateLimits: Collection<BucketDocument>;
}

/** Expression: the tokens of the stored bucket refilled up to `$$NOW`; a bucket never seen is full. */
const refilled = ({ capacity, refillPerSecond }: BucketSpec): Document => ({
  $min: [
    capacity,
    {
      $add: [
        { $ifNull: ['$tokens', capacity] },
        {
          $divide: [
            // A clock that steps back neither drains the bucket nor counts an interval twice.
            {
              $multiply: [
                { $max: [0, { $ifNull: [{ $subtract: ['$$NOW', '$updatedAt'] }, 0] }] },
                refillPerSecond,
              ],
            },
            1000,
          ],
        },
      ],
    },
  ],
});

/** Expression: the time of the refilled state: `$$NOW`, but never before the stored `updatedAt`. */
const refilledAt: Document = { $max: ['$$NOW', { $ifNull: ['$updatedAt', '$$NOW'] }] };

/** An aggregation expression: a field path, a literal number, or an operator document. */
type Expression = Document | string | number;

/** Expression: when a bucket holding `tokens` at `at` is full again (absent when it never refills). */
const fullAt = ({ capacity, refillPerSecond }: BucketSpec, tokens: Expression, at: Expression): Document => {
  const missing = { $max: [0, { $subtract: [capacity, tokens] }] };
  if (refillPerSecond <= 0) return { $cond: [{ $lte: [missing, 0] }, at, '$$REMOVE'] };
  return { $add: [at, { $ceil: { $divide: [{ $multiply: [missing, 1000] }, refillPerSecond] } }] };
};

/** Token buckets shared by every instance on one database; see the module comment for the scheme. */
export function mongoRateLimitStore({ rateLimits }: MongoRateLimitStoreOptions): RateLimitStore {
  /** Takes `cost` from one bucket when it holds at least `needed`; true when it did. */
  const takeOne = async (bucket: BucketSpec, cost: number, needed: number): Promise<boolean> => {
    const taker = randomUUID();
    const ok = { $gte: ['$_take.tokens', needed] };
    const left = { $subtract: ['$_take.tokens', cost] };
    const pipeline = [
      { $set: { _take: { tokens: refilled(bucket), at: refilledAt } } },
      {
        $set: {
          tokens: { $cond: [ok, left, '$tokens'] },
          updatedAt: { $cond: [ok, '$_take.at', '$updatedAt'] },
          expiresAt: {
            $cond: [
              ok,
              fullAt(bucket, left, '$_take.at'),
              // A refused first take leaves an empty document behind: let the TTL index remove it.
              {
                $ifNull: [
                  '$expiresAt',
                  { $cond: [{ $eq: [{ $type: '$tokens' }, 'missing'] }, '$$NOW', '$$REMOVE'] },
                ],
              },
            ],
          },
          taker: { $cond: [ok, { $literal: taker }, '$taker'] },
        },
      },
      { $unset: '_take' },
    ];
    const run = () =>
      rateLimits.findOneAndUpdate({ _id: bucket.key }, pipeline, {
        upsert: true,
        returnDocument: 'after',
        projection: { taker: 1 },
      });
    let after: Pick<BucketDocument, 'taker'> | null;
    try {
      after = await run();
    } catch (error) {
      // Two first takes raced to insert the bucket; the loser now finds the winner's document.
      if (!isDuplicateKeyError(error)) throw error;
      after = await run();
    }
    return after?.taker === taker;
  };

  /** Gives back `cost` tokens taken a moment ago, capped at the capacity. */
  const giveBack = async (bucket: BucketSpec, cost: number): Promise<void> => {
    await rateLimits.updateOne({ _id: bucket.key }, [
      {
        $set: {
          _back: { tokens: { $min: [bucket.capacity, { $add: [refilled(bucket), cost] }] }, at: refilledAt },
        },
      },
      {
        $set: {
          tokens: '$_back.tokens',
          updatedAt: '$_back.at',
          expiresAt: fullAt(bucket, '$_back.tokens', '$_back.at'),
        },
      },
      { $unset: '_back' },
    ]);
  };

  return guardMongoStore({
    async take(buckets, cost) {
      if (!Number.isFinite(cost) || cost < 0)
        throw new RangeError(`cost must be a finite number >= 0, got ${cost}`);
      const needed = cost === 0 ? 1 : cost;
      const taken: BucketSpec[] = [];
      // In order, so that a key listed twice is charged twice and each check sees the earlier charge.
      for (const [index, bucket] of buckets.entries()) {
        if (await takeOne(bucket, cost, needed)) {
          taken.push(bucket);
          continue;
        }
        if (cost > 0) await Promise.all(taken.map((earlier) => giveBack(earlier, cost)));
        return index;
      }
      return null;
    },
  } satisfies RateLimitStore);
}

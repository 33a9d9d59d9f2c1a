/**
 * Idempotency records in MongoDB, one document per (organization, key): `_id` is the JSON of the
 * pair, which makes the scope unique.
 *
 * Atomicity scheme. `acquire` is one `findOneAndUpdate` upsert whose update pipeline decides on the
 * server, from the stored record, what the memory adapter decides in code: create a running record
 * when none is live, take over a failed one or one whose lease has ended, or leave it as it is. A
 * taker writes its `holder` (the send id it proposed, new for each attempt), so the record it reads
 * back says whether it acquired the key; of concurrent callers exactly one does. `renew`,
 * `complete`, `fail` and `release` are single writes of the live record, conditional on its holder.
 *
 * Expiry is judged by the server's clock (`$$NOW`): `expiresAt` is set at creation and kept across
 * takeovers; a TTL index deletes expired records within about a minute, and until then every read
 * and write ignores them (`$expr` on `$$NOW`). Leases are judged by the caller's `now`, as in every
 * adapter.
 *
 * @module
 */
import type { Collection } from 'mongodb';
import type {
  IdempotencyAcquisition,
  IdempotencyScope,
  IdempotencyStore,
} from '../../../core/adapter-kit.js';
import type { IdempotencyDocument } from './collections.js';
import { guardMongoStore, isDuplicateKeyError } from './unavailable.js';

/** Options of {@link mongoIdempotencyStore}. */
export interface MongoIdempotencyStoreOptions {
  idempotency: Collection<IdempotencyDocument>;
}

const scopeId = (scope: IdempotencyScope): string => JSON.stringify([scope.organizationId, scope.key]);

/** Aggregation expression: the record has not expired by the server's clock. */
const isLive = { $gt: ['$expiresAt', '$$NOW'] };

/** Idempotency records; see the module comment for the scheme. */
export function mongoIdempotencyStore({ idempotency }: MongoIdempotencyStoreOptions): IdempotencyStore {
  /** A filter on the live record of a scope, with extra conditions. */
  const liveRecord = (scope: IdempotencyScope) => ({ _id: scopeId(scope), $expr: isLive });
  /** A filter on the live record of a scope while it runs under `holder`'s acquisition. */
  const heldRecord = (scope: IdempotencyScope, holder: string) => ({
    ...liveRecord(scope),
    state: 'running' as const,
    holder,
  });

  return guardMongoStore({
    async acquire(scope, fingerprint, sendId, { now, leaseMs, ttlMs }): Promise<IdempotencyAcquisition> {
      // Each attempt proposes a new, random send id: it names the attempt.
      const holder = sendId;
      const lease = { state: 'running', leaseUntil: now + leaseMs, holder: { $literal: holder } };
      // Records written before send ids were proposed here may hold none: a takeover adopts the proposal.
      const takeover = { ...lease, sendId: { $ifNull: ['$sendId', { $literal: sendId }] } };
      const resumable = {
        $and: [
          { $eq: ['$fingerprint', { $literal: fingerprint }] },
          {
            $or: [
              { $eq: ['$state', 'failed'] },
              { $and: [{ $eq: ['$state', 'running'] }, { $lte: ['$leaseUntil', now] }] },
            ],
          },
        ],
      };
      const pipeline = [
        {
          $replaceWith: {
            $cond: [
              isLive,
              // Kept: fingerprint, sendId and expiresAt (a takeover does not extend the 24 hours).
              { $cond: [resumable, { $mergeObjects: ['$$ROOT', takeover] }, '$$ROOT'] },
              // Absent or expired: a new record.
              {
                _id: '$_id',
                fingerprint: { $literal: fingerprint },
                sendId: { $literal: sendId },
                expiresAt: { $add: ['$$NOW', ttlMs] },
                ...lease,
              },
            ],
          },
        },
      ];
      const run = () =>
        idempotency.findOneAndUpdate({ _id: scopeId(scope) }, pipeline, {
          upsert: true,
          returnDocument: 'after',
        });
      let record: IdempotencyDocument | null;
      try {
        record = await run();
      } catch (error) {
        // Two first acquisitions raced to insert; the loser now finds the winner's record.
        if (!isDuplicateKeyError(error)) throw error;
        record = await run();
      }
      if (record === null) throw new Error('idempotency upsert returned no document');
      if (record.holder === holder) return { outcome: 'acquired', sendId: record.sendId ?? sendId };
      if (record.fingerprint !== fingerprint) return { outcome: 'mismatch' };
      if (record.state === 'completed' && record.response !== undefined) {
        const { status, body } = record.response;
        return { outcome: 'completed', response: { status, body } };
      }
      return { outcome: 'busy' };
    },

    async renew(scope, holder, { now, leaseMs }) {
      await idempotency.updateOne(heldRecord(scope, holder), { $max: { leaseUntil: now + leaseMs } });
    },

    async complete(scope, holder, { status, body }) {
      await idempotency.updateOne(heldRecord(scope, holder), {
        $set: { state: 'completed', response: { status, body } },
        $unset: { leaseUntil: '' },
      });
    },

    async fail(scope, holder) {
      await idempotency.updateOne(heldRecord(scope, holder), {
        $set: { state: 'failed' },
        $unset: { leaseUntil: '' },
      });
    },

    async release(scope, holder) {
      await idempotency.deleteOne(heldRecord(scope, holder));
    },
  } satisfies IdempotencyStore);
}

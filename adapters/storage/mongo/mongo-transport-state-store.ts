/**
 * Transport state in MongoDB: one collection, one document per record (`record:<key>`, with `value`
 * and `version`) and one per list (`list:<key>`, with `items`), each with an `expiresAt` of server
 * time or null.
 *
 * Atomicity scheme. Every member is one single-document operation:
 *
 * - `set` is an upsert whose update pipeline writes the value and `version + 1`.
 * - `compareAndSet` with a version is an `updateOne` filtered on that version and on the record
 *   being live: of concurrent writers at one version exactly one matches. With null it is an upsert
 *   filtered on the `_id` alone (MongoDB refuses `$expr` in the filter of an upsert) whose pipeline
 *   keeps a live record as it is and otherwise writes the new one, marked with a random `writeId`:
 *   the writer whose mark the document then carries won. Concurrent inserts of one `_id` meet the
 *   unique index; the loser runs again and finds the winner's live record.
 * - `append` is an upsert whose pipeline concatenates the entry to the live entries (or to none,
 *   when the list has expired) and sets the expiry in the same step; `$push` cannot do either.
 *
 * Expiry is judged by the server's clock (`$$NOW`): a TTL index deletes expired documents within
 * about a minute, and until then every read and write ignores them. A version keeps counting while
 * its document exists, so it starts again only once the TTL index or `delete` removed it.
 *
 * A list is one document, so it holds up to 16 MiB of entries.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { Collection } from 'mongodb';
import {
  type TransportStateRecord,
  type TransportStateStore,
  type TransportStateWriteOptions,
  ttlMillis,
} from '../../../core/adapter-kit.js';
import type { TransportStateDocument } from './collections.js';
import { guardMongoStore, isDuplicateKeyError } from './unavailable.js';

/** Options of {@link mongoTransportStateStore}. */
export interface MongoTransportStateStoreOptions {
  transportState: Collection<TransportStateDocument>;
}

const recordId = (key: string): string => `record:${key}`;
const listId = (key: string): string => `list:${key}`;

/** Aggregation expression: the document has not expired by the server's clock. */
const isLive = {
  $or: [{ $eq: [{ $ifNull: ['$expiresAt', null] }, null] }, { $gt: ['$expiresAt', '$$NOW'] }],
};

/** Aggregation expression of the expiry a write sets: `ttlMs` from the server's now, or never. */
const expiryOf = (options: TransportStateWriteOptions | undefined): { $add: unknown[] } | null => {
  const ttl = ttlMillis(options);
  return ttl === null ? null : { $add: ['$$NOW', ttl] };
};

/** Pipeline stage of a record write; `$literal` keeps a value starting with `$` from being read as a path. */
const writeRecord = (value: string, version: unknown, expiresAt: unknown) => ({
  $set: { value: { $literal: value }, version, expiresAt },
});

/** The next version of the document, whatever it held (1 for a new one). */
const nextVersion = { $add: [{ $ifNull: ['$version', 0] }, 1] };

const recordProjection = { _id: 1, value: 1, version: 1 } as const;

const toRecord = (document: TransportStateDocument | null): TransportStateRecord | null =>
  document?.value === undefined || document.version === undefined
    ? null
    : { value: document.value, version: document.version };

/** Runs an upsert again once when it lost a race to insert the same `_id`; the retry finds the document. */
async function upsertOnce<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!isDuplicateKeyError(error)) throw error;
    return run();
  }
}

/** Transport state; see the module comment for the scheme. */
export function mongoTransportStateStore({
  transportState,
}: MongoTransportStateStoreOptions): TransportStateStore {
  return guardMongoStore({
    async get(key) {
      return toRecord(
        await transportState.findOne({ _id: recordId(key), $expr: isLive }, { projection: recordProjection }),
      );
    },

    async getMany(keys) {
      if (keys.length === 0) return [];
      const ids = [...new Set(keys.map(recordId))];
      // One batch for every document and one more, so that the server closes the cursor with its first
      // answer: a batch only as large as the documents found leaves it open, and asks a second trip.
      const found = await transportState
        .find(
          { _id: { $in: ids }, $expr: isLive },
          { projection: recordProjection, batchSize: ids.length + 1 },
        )
        .toArray();
      const byId = new Map(found.map((document) => [document._id, toRecord(document)]));
      return keys.map((key) => byId.get(recordId(key)) ?? null);
    },

    async set(key, value, options) {
      const expiresAt = expiryOf(options);
      const written = await upsertOnce(() =>
        transportState.findOneAndUpdate(
          { _id: recordId(key) },
          [writeRecord(value, nextVersion, expiresAt)],
          { upsert: true, returnDocument: 'after', projection: recordProjection },
        ),
      );
      const version = toRecord(written)?.version;
      if (version === undefined) throw new Error('transport-state upsert returned no record');
      return version;
    },

    async compareAndSet(key, value, expectedVersion, options) {
      const expiresAt = expiryOf(options);
      if (expectedVersion !== null) {
        const next = expectedVersion + 1;
        const result = await transportState.updateOne(
          { _id: recordId(key), version: expectedVersion, $expr: isLive },
          [writeRecord(value, next, expiresAt)],
        );
        return result.matchedCount === 0 ? null : next;
      }
      const writeId = randomUUID();
      const written = await upsertOnce(() =>
        transportState.findOneAndUpdate(
          { _id: recordId(key) },
          [
            {
              $replaceWith: {
                $cond: [
                  // A document an upsert has just made holds its `_id` only: no record yet.
                  { $and: [{ $ne: [{ $type: '$version' }, 'missing'] }, isLive] },
                  '$$ROOT',
                  {
                    _id: '$_id',
                    value: { $literal: value },
                    version: nextVersion,
                    expiresAt,
                    writeId: { $literal: writeId },
                  },
                ],
              },
            },
          ],
          { upsert: true, returnDocument: 'after', projection: { ...recordProjection, writeId: 1 } },
        ),
      );
      return written?.writeId === writeId ? (toRecord(written)?.version ?? null) : null;
    },

    async delete(key) {
      await transportState.deleteMany({ _id: { $in: [recordId(key), listId(key)] } });
    },

    async append(key, value, options) {
      const expiresAt = expiryOf(options);
      const live = { $cond: [isLive, { $ifNull: ['$items', []] }, []] };
      await upsertOnce(() =>
        transportState.updateOne(
          { _id: listId(key) },
          [{ $set: { items: { $concatArrays: [live, { $literal: [value] }] }, expiresAt } }],
          { upsert: true },
        ),
      );
    },

    async readList(key) {
      const document = await transportState.findOne(
        { _id: listId(key), $expr: isLive },
        { projection: { items: 1 } },
      );
      return document?.items ?? [];
    },
  } satisfies TransportStateStore);
}

/**
 * Due work in MongoDB.
 *
 * Where items live. Every due item is an element of the `due` array of a document of the `requests`
 * collection: the items that a request write schedules are stored inside that request's own
 * document, so the write and its due-work changes are one single-document update (see
 * `mongo-request-store.ts`); an item enqueued on its own ({@link DueWorkStore.enqueue}, such as a
 * replayed callback) gets a holder document of its own, `_id: { dueItem: id }`. Every write of
 * `due` also sets the document's `nextClaimableAt`, the smallest `claimableAt` of its items (absent
 * when it has none), so that claims and `nextRunAt` walk one ordinary index instead of sorting.
 *
 * Atomicity scheme.
 * - `claim` is a loop of `findOneAndUpdate`, each taking the document whose `nextClaimableAt` is
 *   earliest and, in the same update pipeline, leasing its earliest claimable item (`claimableAt`
 *   becomes the end of the lease, `leaseToken` a fresh token). The server serializes concurrent
 *   updates of one document, so exactly one worker gets each item, and an item whose worker died is
 *   claimable again once its lease ends.
 * - `complete` and `reschedule` match the item by id and lease token in one update, so a lease lost
 *   to another worker (or to an `enqueue` that replaced the item) changes nothing.
 * - `enqueue` writes the holder first, then removes any item of the same id elsewhere: a crash in
 *   between leaves a duplicate rather than losing the item. Items that a request write cancels or
 *   replaces are removed from other documents the same way, after the request write.
 *
 * Times in `claimableAt` are the caller's (`now`, `runAt`, leases), as in every adapter.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { AnyBulkWriteOperation, Collection, Document } from 'mongodb';
import type { ClaimedDueItem, DueItem, DueWorkChanges, DueWorkStore } from '../../../core/adapter-kit.js';
import type { DueEntry, HolderId, WorkDocument } from './collections.js';
import { guardMongoStore } from './unavailable.js';

/** `_id` of the holder of an item enqueued on its own. */
export const holderId = (itemId: string): HolderId => ({ dueItem: itemId });

/** A due item as stored: claimable at its `runAt`, never leased. */
export const toEntry = ({ id, kind, requestId, runAt, attempt }: DueItem): DueEntry => ({
  id,
  kind,
  requestId,
  runAt,
  attempt,
  claimableAt: runAt,
  leaseToken: null,
});

/** The entries that `changes.enqueue` adds, one per id (the last one wins, as a replacement would). */
export const entriesToAdd = (changes: DueWorkChanges): DueEntry[] => [
  ...new Map(changes.enqueue.map((item) => [item.id, toEntry(item)])).values(),
];

/** Ids that a request write removes from wherever else they are: cancelled or replaced. */
export const idsToRemove = (changes: DueWorkChanges): string[] => [
  ...new Set([...changes.cancel, ...changes.enqueue.map((item) => item.id)]),
];

/** `nextClaimableAt` of a document holding `entries`, for documents written whole. */
export const nextClaimableAt = (entries: readonly DueEntry[]): { nextClaimableAt?: number } =>
  entries.length === 0 ? {} : { nextClaimableAt: Math.min(...entries.map((entry) => entry.claimableAt)) };

/** Update-pipeline stage that recomputes `nextClaimableAt` from `due`; ends every pipeline that changes `due`. */
export const setNextClaimableAt: Document = {
  $set: {
    nextClaimableAt: {
      $cond: [{ $gt: [{ $size: { $ifNull: ['$due', []] } }, 0] }, { $min: '$due.claimableAt' }, '$$REMOVE'],
    },
  },
};

/** Update-pipeline stage that drops the items with these ids from `due`. */
export const dropItems = (ids: readonly string[]): Document => ({
  $set: {
    due: { $filter: { input: '$due', cond: { $not: [{ $in: ['$$this.id', { $literal: ids }] }] } } },
  },
});

/**
 * Removes the items with these ids from every document but the request `ownerId`: holders are
 * deleted, items of other requests dropped. Runs after the request write, so a crash in between never
 * loses the request's own items.
 */
export async function removeDueElsewhere(
  requests: Collection<WorkDocument>,
  ownerId: string,
  ids: readonly string[],
): Promise<void> {
  if (ids.length === 0) return;
  await Promise.all([
    requests.deleteMany({ _id: { $in: ids.map(holderId) } }),
    requests.updateMany({ _id: { $ne: ownerId }, 'due.id': { $in: [...ids] } }, [
      dropItems(ids),
      setNextClaimableAt,
    ]),
  ]);
}

const toClaimed = (
  { id, kind, requestId, runAt, attempt }: DueEntry,
  leaseToken: string,
): ClaimedDueItem => ({
  id,
  kind,
  requestId,
  runAt,
  attempt,
  leaseToken,
});

/** Expression: whether the item `$$this` is the one `item` holds under its lease. */
const isLeasedItem = (item: ClaimedDueItem): Document => ({
  $and: [
    { $eq: ['$$this.id', { $literal: item.id }] },
    { $eq: ['$$this.leaseToken', { $literal: item.leaseToken }] },
  ],
});

/** Update-pipeline stage that applies `changes` to the item matching `which` (an expression on `$$this`). */
const changeItem = (which: Document, changes: Document): Document => ({
  $set: {
    due: {
      $map: { input: '$due', in: { $cond: [which, { $mergeObjects: ['$$this', changes] }, '$$this'] } },
    },
  },
});

/** Options of {@link mongoDueWorkStore}. */
export interface MongoDueWorkStoreOptions {
  /** The collection of requests, which also holds the items enqueued on their own. */
  requests: Collection<WorkDocument>;
}

/** Due work claimed with `findOneAndUpdate` leases; see the module comment for the scheme. */
export function mongoDueWorkStore({ requests }: MongoDueWorkStoreOptions): DueWorkStore {
  return guardMongoStore({
    async enqueue(items) {
      if (items.length === 0) return;
      const operations = items.flatMap((item): AnyBulkWriteOperation<WorkDocument>[] => {
        const entry = toEntry(item);
        return [
          {
            replaceOne: {
              filter: { _id: holderId(item.id) },
              replacement: { due: [entry], ...nextClaimableAt([entry]) },
              upsert: true,
            },
          },
          {
            updateMany: {
              filter: { _id: { $ne: holderId(item.id) }, 'due.id': item.id },
              update: [dropItems([item.id]), setNextClaimableAt],
            },
          },
        ];
      });
      await requests.bulkWrite(operations, { ordered: true });
    },

    async cancel(ids) {
      if (ids.length === 0) return;
      await Promise.all([
        requests.deleteMany({ _id: { $in: ids.map(holderId) } }),
        requests.updateMany({ 'due.id': { $in: [...ids] } }, [dropItems(ids), setNextClaimableAt]),
      ]);
    },

    async claim(now, limit, leaseMs) {
      const claimed: ClaimedDueItem[] = [];
      // Tokens of this call: with a lease of 0 ms an item is claimable again at `now`, and must not
      // come out twice in one claim.
      const taken: string[] = [];
      while (claimed.length < limit) {
        const leaseToken = randomUUID();
        const claimable = {
          $and: [
            { $lte: ['$$this.claimableAt', now] },
            { $not: [{ $in: ['$$this.leaseToken', { $literal: taken }] }] },
          ],
        };
        const document = await requests.findOneAndUpdate(
          {
            nextClaimableAt: { $lte: now },
            due: { $elemMatch: { claimableAt: { $lte: now }, leaseToken: { $nin: taken } } },
          },
          [
            // The document's earliest claimable item (the first of equals).
            {
              $set: {
                _claim: {
                  $reduce: {
                    input: { $filter: { input: '$due', cond: claimable } },
                    initialValue: null,
                    in: {
                      $cond: [
                        {
                          $or: [
                            { $eq: ['$$value', null] },
                            { $lt: ['$$this.claimableAt', '$$value.claimableAt'] },
                          ],
                        },
                        '$$this',
                        '$$value',
                      ],
                    },
                  },
                },
              },
            },
            changeItem(
              { $eq: ['$$this.id', '$_claim.id'] },
              { claimableAt: now + leaseMs, leaseToken: { $literal: leaseToken } },
            ),
            { $unset: '_claim' },
            setNextClaimableAt,
          ],
          { sort: { nextClaimableAt: 1 }, projection: { _id: 0, due: 1 }, returnDocument: 'after' },
        );
        const entry = document?.due.find((candidate) => candidate.leaseToken === leaseToken);
        if (entry === undefined) break;
        taken.push(leaseToken);
        claimed.push(toClaimed(entry, leaseToken));
      }
      return claimed;
    },

    async complete(item) {
      const owned = { due: { $elemMatch: { id: item.id, leaseToken: item.leaseToken } } };
      const owner = await requests.findOneAndUpdate(
        owned,
        [
          { $set: { due: { $filter: { input: '$due', cond: { $not: [isLeasedItem(item)] } } } } },
          setNextClaimableAt,
        ],
        { projection: { _id: 1 } },
      );
      // A holder has nothing left once its item is done. Left behind by a crash here, an empty holder
      // is inert (nothing to claim) and goes when an item of the same id is enqueued again.
      if (owner !== null && typeof owner._id !== 'string') {
        await requests.deleteOne({ _id: owner._id, due: { $size: 0 } });
      }
    },

    async reschedule(item, runAt, options) {
      await requests.updateOne({ due: { $elemMatch: { id: item.id, leaseToken: item.leaseToken } } }, [
        changeItem(isLeasedItem(item), {
          runAt,
          claimableAt: runAt,
          leaseToken: null,
          attempt: { $add: ['$$this.attempt', options?.sameAttempt === true ? 0 : 1] },
        }),
        setNextClaimableAt,
      ]);
    },

    async nextRunAt() {
      // A numeric range, not `$exists`: its index bounds skip the entries of documents without items
      // (finished requests), which an ascending walk would otherwise meet first.
      const document = await requests.findOne(
        { nextClaimableAt: { $gte: Number.NEGATIVE_INFINITY } },
        { sort: { nextClaimableAt: 1 }, projection: { _id: 0, nextClaimableAt: 1 } },
      );
      return document?.nextClaimableAt ?? null;
    },
  } satisfies DueWorkStore);
}

/**
 * Interactive requests in MongoDB, one document each: `{ _id, request, due }`.
 *
 * Atomicity scheme. A request's pending due items (its timeout, its completion callback) are stored
 * inside its own document (`due`, see `mongo-due-work-store.ts`), so a write and its
 * `DueWorkChanges` are a single-document operation, atomic without transactions:
 *
 * - `createRequest` is one `insertOne` of the request with its items: a duplicate id fails with the
 *   unique `_id` and writes nothing, items included.
 * - `updateRequest` is one `updateOne` filtered on `{ _id, 'request.version': expectedVersion }` whose
 *   update pipeline replaces the request and, in the same step, drops the cancelled and replaced
 *   items from `due`, appends the enqueued ones and recomputes `nextClaimableAt`. Of concurrent
 *   writers at one version exactly one matches; the others change nothing, their due changes
 *   included.
 *
 * A crash can therefore neither lose a stored request's timeout or callback nor apply a losing
 * writer's changes. The only step after the write is removing items of the same ids from other
 * documents (a holder of a replayed callback, in practice never anything): if that is lost to a crash,
 * such an item may run once more; never fewer times.
 *
 * @module
 */
import type { Collection } from 'mongodb';
import { NotifyError, type RequestStore } from '../../../core/adapter-kit.js';
import type { DeliveryDocument, WorkDocument } from './collections.js';
import { expired, expiryAfter, notExpired } from './expiry.js';
import {
  dropItems,
  entriesToAdd,
  idsToRemove,
  nextClaimableAt,
  removeDueElsewhere,
  setNextClaimableAt,
} from './mongo-due-work-store.js';
import { guardMongoStore, isDuplicateKeyError } from './unavailable.js';

/** Options of {@link mongoRequestStore}. */
export interface MongoRequestStoreOptions {
  requests: Collection<WorkDocument>;
  /** The copies of a request, which expire with it. */
  deliveries: Collection<DeliveryDocument>;
}

/** Interactive requests written with compare-and-set on `request.version`; see the module comment. */
export function mongoRequestStore({ requests, deliveries }: MongoRequestStoreOptions): RequestStore {
  return guardMongoStore({
    async createRequest(request, due) {
      const entries = entriesToAdd(due);
      const document = { request, due: entries, ...nextClaimableAt(entries) };
      try {
        await requests.insertOne({ _id: request.id, ...document });
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
        // An expired request the TTL index has not deleted yet is gone: its id may be used again
        // (a send withdrawn, then repeated with its key, within the index's minute).
        const replaced = await requests.replaceOne({ _id: request.id, ...expired }, document);
        if (replaced.matchedCount === 0) {
          throw new NotifyError('internal', `Request ${request.id} already exists`, { cause: error });
        }
      }
      await removeDueElsewhere(requests, request.id, idsToRemove(due));
    },

    async getRequest(id) {
      const document = await requests.findOne(
        { _id: id, ...notExpired },
        { projection: { _id: 0, request: 1 } },
      );
      return document?.request ?? null;
    },

    async updateRequest(next, expectedVersion, due, options) {
      const removed = idsToRemove(due);
      const expiresAt = expiryAfter(options);
      // `$literal` wherever caller data enters a pipeline: a string starting with `$` would otherwise
      // be read as a field path, and an object's fields merged into the stored one.
      // An expired request is gone, as the other stores have it, though the TTL index has not yet
      // deleted it: no write brings it (and, with a ttl, its copies) back.
      const result = await requests.updateOne(
        { _id: next.id, 'request.version': expectedVersion, ...notExpired },
        [
          { $set: { request: { $literal: next } } },
          dropItems(removed),
          { $set: { due: { $concatArrays: ['$due', { $literal: entriesToAdd(due) }] } } },
          setNextClaimableAt,
          ...(expiresAt === null ? [] : [{ $set: { expiresAt } }]),
        ],
      );
      if (result.matchedCount === 0) return false;
      await removeDueElsewhere(requests, next.id, removed);
      // After the write, like the removal above: if it is lost to a crash, the copies are kept until
      // deleted by hand; they never expire before their request.
      // Live copies only: an expired one of an earlier request under this id (created again) stays gone.
      if (expiresAt !== null) {
        await deliveries.updateMany({ sendId: next.id, ...notExpired }, [{ $set: { expiresAt } }]);
      }
      return true;
    },
  } satisfies RequestStore);
}

/**
 * Failed completion callbacks in MongoDB, one document per request id.
 *
 * Atomicity scheme. `add` is one `replaceOne` upsert by request id, which replaces an earlier failure
 * of the request. `take` is one `findOneAndDelete`: of concurrent takers exactly one gets it.
 *
 * Listing is oldest first by `failedAt`, then by a fresh `seq` ObjectId of each `add` (so a failure
 * recorded again goes after others of the same time, as in the memory adapter, whose order is that
 * of `add`; the two agree whenever failures are added in time order, as the core adds them).
 *
 * @module
 */
import type { Collection } from 'mongodb';
import { ObjectId } from 'mongodb';
import type { FailedCallback, FailedCallbackStore } from '../../../core/adapter-kit.js';
import type { FailedCallbackDocument } from './collections.js';
import { guardMongoStore } from './unavailable.js';

/** Options of {@link mongoFailedCallbackStore}. */
export interface MongoFailedCallbackStoreOptions {
  failedCallbacks: Collection<FailedCallbackDocument>;
}

const toFailure = (document: FailedCallbackDocument): FailedCallback => ({
  requestId: document._id,
  organizationId: document.organizationId,
  url: document.url,
  attempts: document.attempts,
  lastStatus: document.lastStatus,
  lastError: document.lastError,
  failedAt: document.failedAt,
});

/** Failed callbacks, oldest first; see the module comment. */
export function mongoFailedCallbackStore({
  failedCallbacks,
}: MongoFailedCallbackStoreOptions): FailedCallbackStore {
  return guardMongoStore({
    async add({ requestId, ...fields }) {
      await failedCallbacks.replaceOne(
        { _id: requestId },
        { ...fields, seq: new ObjectId() },
        { upsert: true },
      );
    },

    async list(organizationId) {
      const found = await failedCallbacks
        .find(organizationId === undefined ? {} : { organizationId })
        .sort({ failedAt: 1, seq: 1 })
        .toArray();
      return found.map(toFailure);
    },

    async get(requestId) {
      const document = await failedCallbacks.findOne({ _id: requestId });
      return document === null ? null : toFailure(document);
    },

    async take(requestId) {
      const document = await failedCallbacks.findOneAndDelete({ _id: requestId });
      return document === null ? null : toFailure(document);
    },
  } satisfies FailedCallbackStore);
}

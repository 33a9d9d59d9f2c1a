/**
 * Failed completion callbacks in MongoDB, one document per request id.
 *
 * Atomicity scheme. `add` is one pipeline `updateOne` upsert by request id, which replaces an earlier
 * failure of the request (and its expiry). `take` is one `findOneAndDelete`: of concurrent takers
 * exactly one gets it. A failure written with a `ttlMs` carries `expiresAt` (the server's clock),
 * which a TTL index deletes by and reads filter on meanwhile.
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
import { expiryAfter, notExpired } from './expiry.js';
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
    async add({ requestId, ...fields }, options) {
      const expiresAt = expiryAfter(options);
      // A pipeline, for the server's clock in the expiry; `$literal`, so that a value starting with
      // `$` (an error text, a URL) is not read as a field path.
      const set = Object.fromEntries(
        Object.entries(fields).map(([name, value]) => [name, { $literal: value }]),
      );
      await failedCallbacks.updateOne(
        { _id: requestId },
        [
          { $set: { ...set, seq: new ObjectId(), ...(expiresAt === null ? {} : { expiresAt }) } },
          ...(expiresAt === null ? [{ $unset: 'expiresAt' }] : []),
        ],
        { upsert: true },
      );
    },

    async list(organizationId) {
      const found = await failedCallbacks
        .find(organizationId === undefined ? notExpired : { organizationId, ...notExpired })
        .sort({ failedAt: 1, seq: 1 })
        .toArray();
      return found.map(toFailure);
    },

    async get(requestId) {
      const document = await failedCallbacks.findOne({ _id: requestId, ...notExpired });
      return document === null ? null : toFailure(document);
    },

    async take(requestId) {
      // An expired failure is left to the TTL index: judged by the server's clock, as reads are.
      const document = await failedCallbacks.findOneAndDelete({ _id: requestId, ...notExpired });
      return document === null ? null : toFailure(document);
    },
  } satisfies FailedCallbackStore);
}

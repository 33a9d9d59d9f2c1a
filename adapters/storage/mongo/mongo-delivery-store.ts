/**
 * Delivered copies in MongoDB, one document per (send, recipient, platform).
 *
 * Atomicity scheme. `addDelivery` is one upsert on (sendId, recipient, platform), backed by a unique
 * index: recording a copy again replaces its `ref` and time in place. The document's `_id` is an
 * ObjectId that the server generates on insert, so sorting by it lists the copies in the order they
 * were first recorded, as the memory adapter does.
 *
 * Expiry. A copy written with a ttl sets the expiry of every copy of its send (a second update, not
 * atomic with the first: a crash in between leaves the others without one, kept until deleted); the
 * write that finishes a request does the same from the request store, and a copy recorded after
 * that write takes its request's expiry. A TTL index on `expiresAt` deletes them; reads skip the
 * expired ones meanwhile.
 *
 * @module
 */
import type { Collection } from 'mongodb';
import type { DeliveryRecord, DeliveryStore } from '../../../core/adapter-kit.js';
import type { DeliveryDocument, WorkDocument } from './collections.js';
import { expiryAfter, notExpired } from './expiry.js';
import { guardMongoStore } from './unavailable.js';

/** Options of {@link mongoDeliveryStore}. */
export interface MongoDeliveryStoreOptions {
  deliveries: Collection<DeliveryDocument>;
  /** Where the request of a send is, whose version `addDelivery` answers. */
  requests: Collection<WorkDocument>;
}

const toDelivery = ({ sendId, recipient, platform, ref, deliveredAt }: DeliveryDocument): DeliveryRecord => ({
  sendId,
  recipient,
  platform,
  ref,
  deliveredAt,
});

/** Delivered copies per send, in recording order; see the module comment. */
export function mongoDeliveryStore({ deliveries, requests }: MongoDeliveryStoreOptions): DeliveryStore {
  return guardMongoStore({
    async addDelivery({ sendId, recipient, platform, ref, deliveredAt }, options) {
      const expiresAt = expiryAfter(options);
      await deliveries.updateOne(
        { sendId, recipient, platform },
        // `$literal`: a ref value starting with `$` would otherwise be read as a field path. A copy
        // recorded over an expired one the TTL index has not deleted yet (its request was created
        // again under its id) starts afresh, without the expiry of the one it replaces.
        [
          {
            $set: {
              ref: { $literal: ref },
              deliveredAt,
              expiresAt: expiresAt ?? { $cond: [{ $gt: ['$expiresAt', '$$NOW'] }, '$expiresAt', '$$REMOVE'] },
            },
          },
        ],
        { upsert: true },
      );
      // Live copies only: an expired one of an earlier request under this id (created again) stays gone.
      if (expiresAt !== null) {
        await deliveries.updateMany({ sendId, ...notExpired }, [{ $set: { expiresAt } }]);
      }
      const found = await requests.findOne(
        { _id: sendId, ...notExpired },
        { projection: { _id: 0, 'request.version': 1, expiresAt: 1 } },
      );
      // A request that finished before this copy was recorded (it timed out while the copy was on its
      // way) set the expiry of the copies it had: this one takes the same.
      if (expiresAt === null && found?.expiresAt instanceof Date) {
        await deliveries.updateOne({ sendId, recipient, platform }, { $set: { expiresAt: found.expiresAt } });
      }
      return found?.request?.version ?? null;
    },

    async listDeliveries(sendId) {
      const found = await deliveries
        .find({ sendId, ...notExpired })
        .sort({ _id: 1 })
        .toArray();
      return found.map(toDelivery);
    },
  } satisfies DeliveryStore);
}

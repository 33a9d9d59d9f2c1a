/**
 * Delivered copies in MongoDB, one document per (send, recipient, platform).
 *
 * Atomicity scheme. `addDelivery` is one upsert on (sendId, recipient, platform), backed by a unique
 * index: recording a copy again replaces its `ref` and time in place. The document's `_id` is an
 * ObjectId that the server generates on insert, so sorting by it lists the copies in the order they
 * were first recorded, as the memory adapter does.
 *
 * @module
 */
import type { Collection } from 'mongodb';
import type { DeliveryRecord, DeliveryStore } from '../../../core/adapter-kit.js';
import type { DeliveryDocument } from './collections.js';
import { guardMongoStore } from './unavailable.js';

/** Options of {@link mongoDeliveryStore}. */
export interface MongoDeliveryStoreOptions {
  deliveries: Collection<DeliveryDocument>;
}

const toDelivery = ({ sendId, recipient, platform, ref, deliveredAt }: DeliveryDocument): DeliveryRecord => ({
  sendId,
  recipient,
  platform,
  ref,
  deliveredAt,
});

/** Delivered copies per send, in recording order; see the module comment. */
export function mongoDeliveryStore({ deliveries }: MongoDeliveryStoreOptions): DeliveryStore {
  return guardMongoStore({
    async addDelivery({ sendId, recipient, platform, ref, deliveredAt }) {
      await deliveries.updateOne(
        { sendId, recipient, platform },
        { $set: { ref, deliveredAt } },
        { upsert: true },
      );
    },

    async listDeliveries(sendId) {
      const found = await deliveries.find({ sendId }).sort({ _id: 1 }).toArray();
      return found.map(toDelivery);
    },
  } satisfies DeliveryStore);
}

import type { DeliveryRecord, DeliveryStore } from '../../../core/adapter-kit.js';
import { addDeliveryScript, listDeliveriesScript } from './lua/delivery-lua.js';
import type { RedisKeys } from './redis-keys.js';
import type { RedisRunner } from './redis-runner.js';
import { asArray, asOptionalNumber, asString } from './replies.js';
import { encodeTtl } from './ttl-argument.js';

/**
 * What the hash holds of a copy: its ref and delivery time. The send is the hash's key, and the
 * recipient and platform its field (the JSON of the pair); the whole record, as earlier releases
 * wrote it, is still read. Short enough for Redis to keep the hash of a send to the inbox compact
 * (a listpack: values up to `hash-max-listpack-value`, 64 bytes by default).
 */
type StoredCopy = [ref: DeliveryRecord['ref'], deliveredAt: number];

/** The record of a copy from its field and its stored JSON, in either form. */
function recordOf(sendId: string, field: string, json: string): DeliveryRecord {
  const stored = JSON.parse(json) as StoredCopy | DeliveryRecord;
  if (!Array.isArray(stored)) return stored;
  const [recipient, platform] = JSON.parse(field) as [string, string];
  const [ref, deliveredAt] = stored;
  return { sendId, recipient, platform, ref, deliveredAt };
}

/** Delivered copies per send: a hash by (recipient, platform) and a list of its fields in recording order. */
export function redisDeliveryStore(redis: RedisRunner, keys: RedisKeys): DeliveryStore {
  return {
    async addDelivery(delivery, options) {
      const version = await redis.evalScript(
        addDeliveryScript,
        [
          keys.deliveries(delivery.sendId),
          keys.deliveryOrder(delivery.sendId),
          keys.request(delivery.sendId),
        ],
        [
          JSON.stringify([delivery.recipient, delivery.platform]),
          JSON.stringify([delivery.ref, delivery.deliveredAt] satisfies StoredCopy),
          encodeTtl(options),
        ],
      );
      return asOptionalNumber(version);
    },
    async listDeliveries(sendId) {
      const reply = await redis.evalScript(
        listDeliveriesScript,
        [keys.deliveries(sendId), keys.deliveryOrder(sendId)],
        [],
      );
      const pairs = asArray(reply);
      const records: DeliveryRecord[] = [];
      for (let i = 0; i + 1 < pairs.length; i += 2) {
        records.push(recordOf(sendId, asString(pairs[i]), asString(pairs[i + 1])));
      }
      return records;
    },
  } satisfies DeliveryStore;
}

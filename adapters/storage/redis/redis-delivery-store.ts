import type { DeliveryRecord, DeliveryStore } from '../../../core/adapter-kit.js';
import { addDeliveryScript, listDeliveriesScript } from './lua/delivery-lua.js';
import type { RedisKeys } from './redis-keys.js';
import type { RedisRunner } from './redis-runner.js';
import { asArray, asOptionalNumber, asString } from './replies.js';
import { encodeTtl } from './ttl-argument.js';

/** A copy as a line of its request: what `DeliveryRecord` holds but the send. */
type CopyLine = [recipient: string, platform: string, ref: DeliveryRecord['ref'], deliveredAt: number];

/**
 * What the hash holds of a copy: its place in recording order, its ref and its delivery time. The
 * send is the hash's key, and the recipient and platform its field (the JSON of the pair); the whole
 * record, as earlier releases wrote it (with a list of the fields for the order), is still read.
 * Short enough for Redis to keep the hash of a send to the inbox compact (a listpack: values up to
 * `hash-max-listpack-value`, 64 bytes by default).
 */
type StoredCopy = [place: number, ref: DeliveryRecord['ref'], deliveredAt: number];

/** A copy from its field and its stored JSON, in either form, and its place (0 for an earlier release's). */
function copyOf(sendId: string, field: string, json: string): { place: number; record: DeliveryRecord } {
  const stored = JSON.parse(json) as StoredCopy | DeliveryRecord;
  if (!Array.isArray(stored)) return { place: 0, record: stored };
  const [recipient, platform] = JSON.parse(field) as [string, string];
  const [place, ref, deliveredAt] = stored;
  return { place, record: { sendId, recipient, platform, ref, deliveredAt } };
}

/**
 * Delivered copies per send: the copies of an interactive request as lines of the request's own
 * string, in recording order (one key per pending request, not two); those of any other send in a
 * hash by (recipient, platform), each copy with its place in recording order.
 */
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
          // The script writes the place, or the recipient and platform, ahead of the rest.
          JSON.stringify([delivery.ref, delivery.deliveredAt]).slice(1),
          encodeTtl(options),
        ],
      );
      return asOptionalNumber(version);
    },
    async listDeliveries(sendId) {
      const reply = await redis.evalScript(
        listDeliveriesScript,
        [keys.deliveries(sendId), keys.deliveryOrder(sendId), keys.request(sendId)],
        [],
      );
      const [order, lines, ...pairs] = asArray(reply);
      const records: DeliveryRecord[] = [];
      for (const line of asString(lines).split('\n')) {
        if (line === '') continue;
        const [recipient, platform, ref, deliveredAt] = JSON.parse(line) as CopyLine;
        records.push({ sendId, recipient, platform, ref, deliveredAt });
      }
      const copies: { place: number; record: DeliveryRecord }[] = [];
      for (let i = 0; i + 1 < pairs.length; i += 2) {
        copies.push(copyOf(sendId, asString(pairs[i]), asString(pairs[i + 1])));
      }
      // A send of an earlier release comes in the order of its list already.
      if (asString(order) === 'placed') copies.sort((a, b) => a.place - b.place);
      for (const { record } of copies) records.push(record);
      return records;
    },
  } satisfies DeliveryStore;
}

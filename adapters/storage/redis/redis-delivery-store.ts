import type { DeliveryRecord, DeliveryStore, InteractiveRequest } from '../../../core/adapter-kit.js';
import { addDeliveryScript, listDeliveriesScript } from './lua/delivery-lua.js';
import type { RedisKeys } from './redis-keys.js';
import type { RedisRunner } from './redis-runner.js';
import { asArray, asOptionalNumber, asString } from './replies.js';
import { decodeRequest } from './request-format.js';
import { encodeTtl } from './ttl-argument.js';

/**
 * A copy as a line of its request: what `DeliveryRecord` holds but the send; or, in the index form,
 * the recipient as its index among the request's and the delivery time as milliseconds after the
 * request's creation.
 */
type CopyLine =
  | [recipient: string, platform: string, ref: DeliveryRecord['ref'], deliveredAt: number]
  | [recipientIndex: number, platform: string, ref: DeliveryRecord['ref'], afterCreation: number];

/** A UTF-16 surrogate not part of a pair. */
const loneSurrogate = /\p{Cs}/u;

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
          JSON.stringify(delivery.recipient),
          JSON.stringify(delivery.platform),
          JSON.stringify(delivery.ref),
          JSON.stringify(delivery.deliveredAt),
          encodeTtl(options),
          // Redis is sent a lone surrogate as U+FFFD, which could then read as another recipient of
          // the request; '' names none, and the copy keeps the recipient in its line.
          loneSurrogate.test(delivery.recipient) ? '' : delivery.recipient,
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
      const [order, lines, requestJson, ...pairs] = asArray(reply);
      const records: DeliveryRecord[] = [];
      let request: InteractiveRequest | null = null;
      for (const line of asString(lines).split('\n')) {
        if (line === '') continue;
        const [recipient, platform, ref, at] = JSON.parse(line) as CopyLine;
        if (typeof recipient === 'string') {
          records.push({ sendId, recipient, platform, ref, deliveredAt: at });
          continue;
        }
        request ??= decodeRequest(asString(requestJson), sendId);
        const named = request.recipients[recipient];
        if (!named) throw new Error(`stored copy of ${sendId}: no recipient at index ${recipient}`);
        records.push({ sendId, recipient: named.key, platform, ref, deliveredAt: request.createdAt + at });
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

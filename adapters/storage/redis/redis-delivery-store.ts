import type { DeliveryRecord, DeliveryStore } from '../../../core/adapter-kit.js';
import { addDeliveryScript, listDeliveriesScript } from './lua/delivery-lua.js';
import type { RedisKeys } from './redis-keys.js';
import type { RedisRunner } from './redis-runner.js';
import { asArray, asOptionalNumber, parseJson } from './replies.js';
import { encodeTtl } from './ttl-argument.js';

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
          JSON.stringify(delivery),
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
      return asArray(reply).map((json) => parseJson<DeliveryRecord>(json));
    },
  } satisfies DeliveryStore;
}

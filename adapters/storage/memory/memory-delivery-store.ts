import type { DeliveryRecord, DeliveryStore } from '../../../core/adapter-kit.js';

/** Delivered copies per send, in recording order; a copy recorded again keeps its place. */
export function memoryDeliveryStore(): DeliveryStore {
  const bySend = new Map<string, DeliveryRecord[]>();

  return {
    async addDelivery(delivery) {
      const copy = structuredClone(delivery);
      const list = bySend.get(delivery.sendId);
      if (list === undefined) {
        bySend.set(delivery.sendId, [copy]);
        return;
      }
      // A send has at most a few hundred copies (50 recipients times their platforms): a scan is cheap.
      const index = list.findIndex((d) => d.recipient === copy.recipient && d.platform === copy.platform);
      if (index === -1) list.push(copy);
      else list[index] = copy;
    },
    async listDeliveries(sendId) {
      return structuredClone(bySend.get(sendId) ?? []);
    },
  } satisfies DeliveryStore;
}

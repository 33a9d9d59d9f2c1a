/** Platform-specific reference to a delivered message (Slack channel and ts, an inbox message id). */
export type DeliveryRef = Readonly<Record<string, string>>;

/** One copy of a message delivered to one recipient on one platform. */
export interface DeliveryRecord {
  /** `notif_…` or `req_…`. */
  sendId: string;
  /** Normalized address of the recipient. */
  recipient: string;
  platform: string;
  ref: DeliveryRef;
  /** Epoch milliseconds. */
  deliveredAt: number;
}

/** Which copies of each send were delivered: to update them later, and to resume a failed send. */
export interface DeliveryStore {
  /** Records a delivered copy. Recording the same (sendId, recipient, platform) again replaces it. */
  addDelivery: (delivery: DeliveryRecord) => Promise<void>;
  /** The copies of a send, in the order they were recorded. */
  listDeliveries: (sendId: string) => Promise<DeliveryRecord[]>;
}

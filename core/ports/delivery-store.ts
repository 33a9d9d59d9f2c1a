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

/** Options of {@link DeliveryStore.addDelivery}. */
export interface DeliveryWriteOptions {
  /**
   * Milliseconds from this write, by the store's clock (the server's for Redis and MongoDB), after
   * which every copy of the send is gone, as if never recorded: given for a fire-and-forget send
   * (its copies are never updated) and for a copy of an interactive request that already finished
   * (then what is left of the request's retention: a store that keeps copies in the request's record
   * may set it on the request too).
   * A positive number; fractions round up. Without it, a copy recorded again keeps its expiry.
   */
  ttlMs?: number;
}

/** Which copies of each send were delivered: to update them later, and to resume a failed send. */
export interface DeliveryStore {
  /**
   * Records a delivered copy. Recording the same (sendId, recipient, platform) again replaces it.
   * With `options.ttlMs`, the copies of the send expire as {@link DeliveryWriteOptions.ttlMs} says.
   *
   * Answers the `version` of the interactive request stored under `sendId` (the `RequestStore`'s),
   * read once the copy is recorded, or null when there is none (a plain send, an expired request).
   * So a sender learns without another read whether the request changed (a click) while its copies
   * were going out: a change made before the copy was recorded is always seen, and one made after
   * it finds the copy among `listDeliveries`.
   */
  addDelivery: (delivery: DeliveryRecord, options?: DeliveryWriteOptions) => Promise<number | null>;
  /** The copies of a send, in the order they were recorded. */
  listDeliveries: (sendId: string) => Promise<DeliveryRecord[]>;
}

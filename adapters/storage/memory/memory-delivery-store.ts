import type { Clock, DeliveryRecord, DeliveryStore } from '../../../core/adapter-kit.js';
import { flatString } from './flat-string.js';
import { createInterner } from './interner.js';
import { createLazySweep } from './lazy-sweep.js';

/** Options of {@link memoryDeliveryStore}. */
export interface MemoryDeliveryStoreOptions {
  /** Decides when the copies of a send expire, as a server's clock would for Redis or MongoDB. */
  clock: Clock;
  /**
   * The version of the request stored under a send id (the `RequestStore`'s), which `addDelivery`
   * answers; absent when the store stands alone: it answers null then, as for a plain send.
   */
  requestVersion?: (sendId: string) => Promise<number | null>;
}

/** The memory delivery store, plus the synchronous hook that lets a request write set the expiry of its copies. */
export interface MemoryDeliveryStore extends DeliveryStore {
  /** Makes every copy of `sendId` expire at `expiresAt` (store-clock epoch milliseconds), at once. */
  expire(sendId: string, expiresAt: number): void;
}

/** A copy as kept: its send is the map's key. */
type StoredCopy = Omit<DeliveryRecord, 'sendId'>;

/** The copies of one send and when they expire (null: never). */
interface Send {
  /** Exactly as long as it needs to be: a pending request keeps its copies for as long as it waits. */
  copies: StoredCopy[];
  expiresAt: number | null;
}

/**
 * Makes the copies a store keeps: their own ref, with flat strings, since a copy may be kept for the
 * whole retention, and one shared string per recipient address, which every send to it repeats.
 */
function createCopyKeeper(): (delivery: DeliveryRecord) => StoredCopy {
  const addresses = createInterner<string>();
  return ({ recipient, platform, ref, deliveredAt }) => {
    const kept = { ...ref };
    for (const value of Object.values(kept)) flatString(value);
    return {
      recipient: addresses.intern(recipient, flatString(recipient)),
      platform,
      ref: kept,
      deliveredAt,
    };
  };
}

const recordOf = (sendId: string, { recipient, platform, ref, deliveredAt }: StoredCopy): DeliveryRecord => ({
  sendId,
  recipient,
  platform,
  ref: { ...ref },
  deliveredAt,
});

const isExpired = (send: Send, now: number): boolean => send.expiresAt !== null && send.expiresAt <= now;

/**
 * Delivered copies per send, in recording order; a copy recorded again keeps its place. Expired sends
 * read as empty, are dropped when read and swept lazily as it is written.
 */
export function memoryDeliveryStore({
  clock,
  requestVersion,
}: MemoryDeliveryStoreOptions): MemoryDeliveryStore {
  const bySend = new Map<string, Send>();
  const sweep = createLazySweep(bySend, isExpired, clock);
  const storedCopyOf = createCopyKeeper();

  const live = (sendId: string): Send | undefined => {
    const send = bySend.get(sendId);
    if (send === undefined || !isExpired(send, clock.now())) return send;
    bySend.delete(sendId);
    return undefined;
  };

  const record = (delivery: DeliveryRecord, ttlMs: number | undefined): void => {
    const copy = storedCopyOf(delivery);
    const expiresAt = ttlMs === undefined ? undefined : clock.now() + Math.ceil(ttlMs);
    const send = live(delivery.sendId);
    if (send === undefined) {
      bySend.set(flatString(delivery.sendId), { copies: [copy], expiresAt: expiresAt ?? null });
      sweep();
      return;
    }
    if (expiresAt !== undefined) send.expiresAt = expiresAt;
    // A send has at most a few hundred copies (50 recipients times their platforms): a scan is cheap.
    const index = send.copies.findIndex(
      (d) => d.recipient === copy.recipient && d.platform === copy.platform,
    );
    // A fresh array of the exact length (`concat` allocates no more): a pushed-to array, or a spread
    // one, keeps room for a dozen more copies.
    if (index === -1) send.copies = send.copies.concat(copy);
    else send.copies[index] = copy;
  };

  return {
    expire(sendId, expiresAt) {
      const send = live(sendId);
      if (send !== undefined) send.expiresAt = expiresAt;
    },
    async addDelivery(delivery, options) {
      record(delivery, options?.ttlMs);
      return requestVersion === undefined ? null : requestVersion(delivery.sendId);
    },
    async listDeliveries(sendId) {
      return (live(sendId)?.copies ?? []).map((copy) => recordOf(sendId, copy));
    },
  } satisfies MemoryDeliveryStore;
}

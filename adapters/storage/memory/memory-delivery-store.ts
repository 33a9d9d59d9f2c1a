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

/**
 * The copies of one send in one flat array, since a pending request keeps its copies for as long as
 * it waits: first when they expire (null: never), then for each copy its recipient, platform and
 * deliveredAt, followed by its ref's entries as name and value. deliveredAt is a copy's only number,
 * so a copy ends where a number stands two places on (the next copy's deliveredAt), or at the end.
 * Kept as an object per copy, with an object for its ref, in an array held by an object for the
 * send, the copies of a send to 3 recipients took 198 bytes more.
 */
type Send = [expiresAt: number | null, ...copies: (string | number)[]];

/** Fields of a copy before its ref's entries. */
const fixedFields = 3;

/**
 * Makes the fields a copy is kept as: flat strings, since a copy may be kept for the whole
 * retention, and one shared string per recipient address, which every send to it repeats.
 */
function createCopyKeeper(): (delivery: DeliveryRecord) => (string | number)[] {
  const addresses = createInterner<string>();
  return ({ recipient, platform, ref, deliveredAt }) => {
    const fields: (string | number)[] = [
      addresses.intern(recipient, flatString(recipient)),
      platform,
      deliveredAt,
    ];
    for (const [name, value] of Object.entries(ref)) fields.push(name, flatString(value));
    return fields;
  };
}

/** Where the copy of `send` that starts at `at` ends. */
function copyEnd(send: Send, at: number): number {
  let end = at + fixedFields;
  while (end < send.length && typeof send[end + 2] !== 'number') end += 2;
  return end;
}

/** Where each copy of `send` starts, in recording order. */
function copyOffsets(send: Send): number[] {
  const offsets: number[] = [];
  for (let at = 1; at < send.length; at = copyEnd(send, at)) offsets.push(at);
  return offsets;
}

const recordAt = (sendId: string, send: Send, at: number): DeliveryRecord => {
  const ref: Record<string, string> = {};
  const end = copyEnd(send, at);
  for (let entry = at + fixedFields; entry < end; entry += 2)
    ref[send[entry] as string] = send[entry + 1] as string;
  return {
    sendId,
    recipient: send[at] as string,
    platform: send[at + 1] as string,
    ref,
    deliveredAt: send[at + 2] as number,
  };
};

const isExpired = (send: Send, now: number): boolean => send[0] !== null && send[0] <= now;

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
  const keptFieldsOf = createCopyKeeper();

  const live = (sendId: string): Send | undefined => {
    const send = bySend.get(sendId);
    if (send === undefined || !isExpired(send, clock.now())) return send;
    bySend.delete(sendId);
    return undefined;
  };

  const record = (delivery: DeliveryRecord, ttlMs: number | undefined): void => {
    const fields = keptFieldsOf(delivery);
    const expiresAt = ttlMs === undefined ? undefined : clock.now() + Math.ceil(ttlMs);
    const send = live(delivery.sendId);
    if (send === undefined) {
      bySend.set(flatString(delivery.sendId), ([expiresAt ?? null] as Send).concat(fields) as Send);
      sweep();
      return;
    }
    // A send has at most a few hundred copies (50 recipients times their platforms): a scan is cheap.
    const offsets = copyOffsets(send);
    const at = offsets.find((offset) => send[offset] === fields[0] && send[offset + 1] === fields[1]);
    // Copies delivered in the same millisecond share one boxed time (a time is a 16-byte object).
    const sameTime = offsets.find((offset) => send[offset + 2] === fields[2]);
    if (sameTime !== undefined) fields[2] = send[sameTime + 2] as number;
    // A fresh array of the exact length (`concat` and `slice` allocate no more): a pushed-to array
    // keeps room for a dozen more copies.
    const next: Send =
      at === undefined
        ? (send.concat(fields) as Send)
        : (send.slice(0, at).concat(fields, send.slice(copyEnd(send, at))) as Send);
    if (expiresAt !== undefined) next[0] = expiresAt;
    bySend.set(delivery.sendId, next);
  };

  return {
    expire(sendId, expiresAt) {
      const send = live(sendId);
      if (send !== undefined) send[0] = expiresAt;
    },
    async addDelivery(delivery, options) {
      record(delivery, options?.ttlMs);
      return requestVersion === undefined ? null : requestVersion(delivery.sendId);
    },
    async listDeliveries(sendId) {
      const send = live(sendId);
      return send === undefined ? [] : copyOffsets(send).map((at) => recordAt(sendId, send, at));
    },
  } satisfies MemoryDeliveryStore;
}

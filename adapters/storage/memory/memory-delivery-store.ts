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

/** The names of a ref's entries, in order: one array shared by every ref with the same names. */
type RefNames = readonly string[];

/**
 * The copies of one send in one flat array, since a pending request keeps its copies for as long as
 * it waits: first when they expire (null: never), then for each copy its recipient, platform and
 * deliveredAt, then, unless its ref is empty (as the inbox's are), the names of the ref's entries
 * followed by their values. A copy's recipient is a string, its names an array: a copy ends right
 * after its deliveredAt when no array follows, or as many places after its names as they are. Kept
 * as an object per copy, with an object for its ref, in an array held by an object for the send,
 * the copies of a send to 3 recipients took 198 bytes more; with each name beside its value, a ref
 * of five entries took 32 more.
 */
type Send = [expiresAt: number | null, ...copies: (string | number | RefNames)[]];

/** Fields of a copy before its ref's names. */
const fixedFields = 3;

/**
 * Makes the fields a copy is kept as: flat strings, since a copy may be kept for the whole
 * retention, one shared string per recipient address, which every send to it repeats, and one
 * shared array of names per kind of ref.
 */
function createCopyKeeper(): (delivery: DeliveryRecord) => (string | number | RefNames)[] {
  const addresses = createInterner<string>();
  const refNames = createInterner<RefNames>();
  return ({ recipient, platform, ref, deliveredAt }) => {
    const fields: (string | number | RefNames)[] = [
      addresses.intern(recipient, flatString(recipient)),
      platform,
      deliveredAt,
    ];
    const names = Object.keys(ref);
    if (names.length === 0) return fields;
    fields.push(refNames.intern(JSON.stringify(names), names));
    for (const value of Object.values(ref)) fields.push(flatString(value));
    return fields;
  };
}

/** The names of the ref of the copy of `send` that starts at `at`, or null for an empty ref. */
const namesAt = (send: Send, at: number): RefNames | null => {
  const names = send[at + fixedFields];
  return Array.isArray(names) ? names : null;
};

/** Where the copy of `send` that starts at `at` ends. */
const copyEnd = (send: Send, at: number): number => {
  const names = namesAt(send, at);
  return names === null ? at + fixedFields : at + fixedFields + 1 + names.length;
};

/** Where each copy of `send` starts, in recording order. */
function copyOffsets(send: Send): number[] {
  const offsets: number[] = [];
  for (let at = 1; at < send.length; at = copyEnd(send, at)) offsets.push(at);
  return offsets;
}

const recordAt = (sendId: string, send: Send, at: number): DeliveryRecord => {
  const ref: Record<string, string> = {};
  const names = namesAt(send, at) ?? [];
  for (const [index, name] of names.entries()) ref[name] = send[at + fixedFields + 1 + index] as string;
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
      if (send !== undefined) {
        send[0] = expiresAt;
        return;
      }
      // No copy yet (a request that finished while its first copy was on its way): a copy recorded
      // later goes with the request all the same.
      const empty: Send = [expiresAt];
      bySend.set(flatString(sendId), empty);
      sweep();
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

import { createHmac, timingSafeEqual } from 'node:crypto';
import { randomBase62, type TransportStateStore } from '../../../core/adapter-kit.js';

/** The copy of a send to one recipient. */
export interface Copy {
  /** `req_…` or `notif_…`. */
  sendId: string;
  /** Normalized address of the recipient. */
  recipient: string;
}

/** The ids of copies: made from the copy itself, so that finding a copy by id needs no index. */
export interface CopyIds {
  /** The id of `copy`. */
  idOf(copy: Copy): Promise<string>;
  /** The copy `id` names, or null for an id this inbox did not make. */
  copyOf(id: string): Promise<Copy | null>;
}

/** The record of the key that signs ids, shared by every instance on one store. */
const signingKey = 'id-signing-key';
const idPattern = /^msg_([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{22})$/;

/**
 * How long a key read from the store is used before it is read again: a store emptied under running
 * instances (a flush, a restart without persistence) gets a new key from the first instance that
 * needs one, and every instance takes it within this time, instead of signing with its own for good.
 */
const keyReadEveryMs = 60_000;

/**
 * Ids of the form `msg_<copy>.<tag>`: the send id and recipient base64url-encoded, then 128 bits of
 * their HMAC-SHA-256 under a random key kept in the inbox's state. The tag makes an id proof that
 * the inbox delivered that copy: an id made up for someone a send did not reach names nothing,
 * without the inbox listing each send's recipients. The key is created by whichever instance needs
 * it first and read by the others, again every minute. `now` is a monotonic clock in ms.
 */
export function copyIds(state: TransportStateStore, now: () => number = () => performance.now()): CopyIds {
  let key: Promise<string> | undefined;
  let readAt = 0;

  const load = async (): Promise<string> => {
    for (;;) {
      const fresh = randomBase62(43);
      if ((await state.compareAndSet(signingKey, fresh, null)) !== null) return fresh;
      const record = await state.get(signingKey);
      if (record !== null) return record.value;
    }
  };
  /** The key the store holds now (made if it holds none); the one in use while the store fails. */
  const reread = async (inUse: string): Promise<string> => {
    try {
      return (await state.get(signingKey))?.value ?? (await load());
    } catch {
      return inUse;
    }
  };
  /** Keeps `reading` as the key; a failed read is forgotten, so that the next call tries again. */
  const remember = (reading: Promise<string>): Promise<string> => {
    const kept: Promise<string> = reading.catch((error: unknown) => {
      if (key === kept) key = undefined;
      throw error;
    });
    key = kept;
    return kept;
  };
  const secret = (): Promise<string> => {
    if (key === undefined) {
      readAt = now();
      return remember(load());
    }
    if (now() - readAt < keyReadEveryMs) return key;
    readAt = now();
    return remember(key.then(reread));
  };
  const tagOf = async (encoded: string): Promise<Buffer> =>
    createHmac('sha256', await secret())
      .update(encoded)
      .digest()
      .subarray(0, 16);

  return {
    async idOf({ sendId, recipient }) {
      const encoded = Buffer.from(`${sendId}\n${recipient}`).toString('base64url');
      return `msg_${encoded}.${(await tagOf(encoded)).toString('base64url')}`;
    },

    async copyOf(id) {
      const [, encoded = '', tag = ''] = idPattern.exec(id) ?? [];
      const given = Buffer.from(tag, 'base64url');
      if (given.length !== 16 || !timingSafeEqual(given, await tagOf(encoded))) return null;
      const decoded = Buffer.from(encoded, 'base64url').toString();
      const split = decoded.indexOf('\n');
      return split <= 0 ? null : { sendId: decoded.slice(0, split), recipient: decoded.slice(split + 1) };
    },
  };
}

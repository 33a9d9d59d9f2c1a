import {
  attemptNetwork,
  type BucketState,
  refill,
  type TransportStateStore,
} from '../../core/adapter-kit.js';
import type { Clock, RateLimit } from '../../core/index.js';

/** How many failed sign-ins are allowed in a row, and how fast the allowance comes back. */
export interface SignInLimits {
  /**
   * Per account (the email as typed, whether or not it exists); a browser that signed in to the
   * account before has a bucket of its own at this rate.
   */
  perAccount: RateLimit;
  /** Per client address (per /64 for IPv6), across accounts. */
  perAddress: RateLimit;
}

/** 5 failures per account, then one more every 30 s; 20 per address, then one every 5 s. */
export const defaultSignInLimits: SignInLimits = {
  perAccount: { burst: 5, perSecond: 1 / 30 },
  perAddress: { burst: 20, perSecond: 1 / 5 },
};

/** The answer of {@link SignInThrottle.reserve}. */
export type Reservation =
  /** The attempt may go on; `release` gives the tokens back when the password was right. */
  | { granted: true; release(): Promise<void> }
  /** Too many failures lately: no password is checked until the wait is over. */
  | { granted: false; retryAfterSeconds: number };

/** Slows failed sign-ins down, per account and per address, on storage shared by every instance. */
export interface SignInThrottle {
  /**
   * Takes one token from the account's bucket and one from the address's, before the password is
   * checked. With `device` (a digest naming a browser that signed in to this account before), the
   * token comes from that browser's own bucket instead of the account's, at the same rate.
   */
  reserve(account: string, address: string, device?: string): Promise<Reservation>;
}

type Change = { done: true } | { done: false; waitMs: number };

/**
 * Token buckets in a transport-state view. Every attempt takes its tokens before the password is
 * checked, by compare-and-set, and a right password gives them back: so concurrent guesses cannot
 * all slip in before the first failure is counted, while the right password costs nothing. A bucket
 * refills by itself, so the right password works again once the wait is over.
 */
export function signInThrottle(
  state: TransportStateStore,
  clock: Clock,
  limits: SignInLimits,
): SignInThrottle {
  async function change(key: string, limit: RateLimit, delta: 1 | -1): Promise<Change> {
    // Bounded: under a storm of attempts on one key, refusing is the safe answer.
    for (let attempt = 0; attempt < 20; attempt++) {
      const record = await state.get(key);
      const now = clock.now();
      const stored = record === null ? undefined : (JSON.parse(record.value) as BucketState);
      const level = refill(stored, { capacity: limit.burst, refillPerSecond: limit.perSecond }, now).tokens;
      const tokens = Math.min(limit.burst, level + delta);
      if (tokens < 0) return { done: false, waitMs: ((1 - level) * 1000) / limit.perSecond };
      const bucket: BucketState = { tokens, updatedAt: now };
      // Forgotten once full again: an absent bucket is a full one.
      const ttlMs = Math.max(1, ((limit.burst - tokens) * 1000) / limit.perSecond);
      const written = await state.compareAndSet(key, JSON.stringify(bucket), record?.version ?? null, {
        ttlMs,
      });
      if (written !== null) return { done: true };
    }
    return { done: false, waitMs: 1000 };
  }
  const refused = (change: { waitMs: number }): Reservation => ({
    granted: false,
    retryAfterSeconds: Math.max(1, Math.ceil(change.waitMs / 1000)),
  });

  return {
    async reserve(account, address, device) {
      const accountKey = device === undefined ? `signin-account:${account}` : `signin-device:${device}`;
      const addressKey = `signin-address:${attemptNetwork(address)}`;
      const byAccount = await change(accountKey, limits.perAccount, -1);
      if (!byAccount.done) return refused(byAccount);
      const byAddress = await change(addressKey, limits.perAddress, -1);
      if (!byAddress.done) {
        await change(accountKey, limits.perAccount, 1);
        return refused(byAddress);
      }
      return {
        granted: true,
        async release() {
          await Promise.all([
            change(accountKey, limits.perAccount, 1),
            change(addressKey, limits.perAddress, 1),
          ]);
        },
      };
    },
  };
}

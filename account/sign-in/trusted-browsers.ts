import { createHash } from 'node:crypto';
import type { TransportStateStore } from '../../core/adapter-kit.js';
import type { Clock } from '../../core/index.js';

/** How long after its last sign-in to an account a browser keeps a slow-down bucket of its own there. */
const trustedBrowserMs = 90 * 24 * 3600_000;

/** The most browsers an account remembers; a sign-in from one more forgets the one unused longest. */
const mostTrustedBrowsers = 20;

/**
 * The browsers that signed in to one account with one credential: each by its digest, with when it
 * last did. A record of another credential (the password changed, or the sign-in was taken away and
 * given back) trusts nobody.
 */
interface TrustRecord {
  credential: string;
  browsers: [digest: string, signedInAt: number][];
}

/** Browsers that signed in to an account before, per account and bounded, kept in storage. */
export interface TrustedBrowsers {
  /** Whether the browser of `digest` signed in to `account` with its credential `credentialId` lately. */
  trusts(account: string, credentialId: string, digest: string): Promise<boolean>;
  /** Records a sign-in of the browser of `digest` to `account` with its credential `credentialId`. */
  remember(account: string, credentialId: string, digest: string): Promise<void>;
  /** Forgets every browser of `account`. */
  forget(account: string): Promise<void>;
}

/**
 * Names a browser's sign-ins to one account without storing its secret (the account pages' CSRF
 * anchor, which only that browser holds).
 */
export const browserDigest = (secret: string, account: string): string =>
  createHash('sha256').update(`${secret}\n${account}`).digest('hex');

const keyOf = (account: string) => `signin-browsers:${account}`;

/** One record per account, so that an account holder signing in from ever new browsers keeps it bounded. */
export function trustedBrowsers(state: TransportStateStore, clock: Clock): TrustedBrowsers {
  const read = async (account: string) => {
    const record = await state.get(keyOf(account));
    return { record, trust: record === null ? null : (JSON.parse(record.value) as TrustRecord) };
  };
  return {
    async trusts(account, credentialId, digest) {
      const { trust } = await read(account);
      const since = clock.now() - trustedBrowserMs;
      return (
        trust?.credential === credentialId &&
        trust.browsers.some(([known, signedInAt]) => known === digest && signedInAt > since)
      );
    },
    async remember(account, credentialId, digest) {
      // Compare-and-set, a few times: a browser not remembered under a storm of sign-ins to one
      // account only waits with the account's bucket.
      for (let attempt = 0; attempt < 5; attempt++) {
        const { record, trust } = await read(account);
        const now = clock.now();
        const kept = (trust?.credential === credentialId ? trust.browsers : []).filter(
          ([known, signedInAt]) => known !== digest && signedInAt > now - trustedBrowserMs,
        );
        const next: TrustRecord = {
          credential: credentialId,
          browsers: [...kept.slice(-(mostTrustedBrowsers - 1)), [digest, now]],
        };
        const written = await state.compareAndSet(
          keyOf(account),
          JSON.stringify(next),
          record?.version ?? null,
          {
            ttlMs: trustedBrowserMs,
          },
        );
        if (written !== null) return;
      }
    },
    forget: (account) => state.delete(keyOf(account)),
  };
}

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { TransportStateStore } from '../core/adapter-kit.js';

/**
 * Tokens against cross-site request forgery: signed double-submit tokens bound to the user. Each
 * browser holds a random anchor in an `HttpOnly` cookie; a form carries the HMAC of that anchor and
 * the signed-in user's id (the empty id before sign-in). Another site can neither read the token nor
 * compute it, and a token obtained by signing in elsewhere is worth nothing for another user.
 */
export interface CsrfTokens {
  /** The token of the forms of a browser's anchor, for `userId` ('' when nobody is signed in). */
  token(anchor: string, userId: string): Promise<string>;
  /** Whether `token` is the token of `anchor` and `userId`; false when either is missing. */
  verify(anchor: string | undefined, userId: string, token: string | undefined): Promise<boolean>;
}

const secretKey = 'csrf-secret';

/**
 * Tokens signed with `secret`, or, without it, with a random secret that the first instance stores
 * in `state` and every instance then reads, so that a form served by one instance posts to another.
 */
export function csrfTokens(state: TransportStateStore, secret?: string): CsrfTokens {
  let loading: Promise<string> | null = secret === undefined ? null : Promise.resolve(secret);
  const load = async () => {
    await state.compareAndSet(secretKey, randomBytes(32).toString('base64url'), null);
    const stored = await state.get(secretKey);
    if (stored === null) throw new Error('The CSRF secret vanished from the account state');
    return stored.value;
  };
  const key = () => {
    // A failed read (storage down) is tried again on the next request, not remembered.
    loading ??= load().catch((error: unknown) => {
      loading = null;
      throw error;
    });
    return loading;
  };
  const sign = async (anchor: string, userId: string) =>
    createHmac('sha256', await key())
      .update(`${anchor}\n${userId}`)
      .digest('base64url');
  return {
    token: sign,
    async verify(anchor, userId, token) {
      if (!anchor || !token) return false;
      const expected = Buffer.from(await sign(anchor, userId));
      const given = Buffer.from(token);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

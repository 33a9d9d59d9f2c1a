/**
 * Bounds how often tokens that name a signing key no token has verified with are checked: for
 * each, the SDK fetches the issuer's key set again, so that a stream of made-up key ids would make
 * the service call Microsoft (or the authority) once per request.
 */
export interface KeyFetchGuard {
  /** Whether a token naming `keyId` may be checked now. */
  admits(keyId: string | undefined): boolean;
  /** Records the key of a token that verified: tokens naming it are checked freely from then on. */
  verified(keyId: string | undefined): void;
}

/** Keys remembered at most; a key rolled over long ago is forgotten with the rest. */
const mostKnownKeys = 64;

/**
 * `perMinute` checks of tokens naming unknown keys a minute, in a token bucket of that size: the
 * first token of a rolled-over key is checked as soon as the bucket holds one.
 */
export function keyFetchGuard(perMinute = 10, now: () => number = Date.now): KeyFetchGuard {
  const known = new Set<string>();
  let tokens = perMinute;
  let refilledAt = now();
  return {
    admits(keyId) {
      if (keyId !== undefined && known.has(keyId)) return true;
      const at = now();
      tokens = Math.min(perMinute, tokens + ((at - refilledAt) * perMinute) / 60_000);
      refilledAt = at;
      if (tokens < 1) return false;
      tokens -= 1;
      return true;
    },
    verified(keyId) {
      if (keyId === undefined) return;
      if (known.size >= mostKnownKeys) known.clear();
      known.add(keyId);
    },
  };
}

/** The `kid` of a bearer JWT's header, read without verifying anything; undefined when there is none. */
export function keyIdOf(authorization: string): string | undefined {
  const token = /^Bearer\s+(\S+)$/i.exec(authorization.trim())?.[1];
  const header = token?.split('.')[0];
  if (header === undefined) return undefined;
  try {
    const { kid } = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { kid?: unknown };
    return typeof kid === 'string' ? kid : undefined;
  } catch {
    return undefined;
  }
}

import { type BucketState, refill } from '../../../core/adapter-kit.js';

/**
 * Bounds how often tokens that name a signing key no token has verified with are checked: for
 * each, the SDK fetches the issuer's key set again, so that a stream of made-up key ids would make
 * the service call Microsoft (or the authority) once per request. A key is named by the token's
 * issuer and key id together: the issuer decides which key set the SDK fetches.
 */
export interface KeyFetchGuard {
  /** Whether a token naming `key` may be checked now. */
  admits(key: string): boolean;
  /** Records the key of a token that verified: tokens naming it are checked freely from then on. */
  verified(key: string): void;
}

/** Keys remembered at most; a key rolled over long ago is forgotten with the rest. */
const mostKnownKeys = 64;

/**
 * `perMinute` checks of tokens naming unknown keys a minute, in a token bucket of that size: the
 * first token of a rolled-over key is checked as soon as the bucket holds one. Whoever wants to keep
 * a rolled-over key out must send forged tokens faster than that, one a second by default.
 */
export function keyFetchGuard(perMinute = 60, now: () => number = Date.now): KeyFetchGuard {
  const known = new Set<string>();
  const shape = { capacity: perMinute, refillPerSecond: perMinute / 60 };
  let bucket: BucketState | undefined;
  return {
    admits(key) {
      if (known.has(key)) return true;
      const filled = refill(bucket, shape, now());
      if (filled.tokens < 1) {
        bucket = filled;
        return false;
      }
      bucket = { tokens: filled.tokens - 1, updatedAt: filled.updatedAt };
      return true;
    },
    verified(key) {
      if (known.size >= mostKnownKeys) known.clear();
      known.add(key);
    },
  };
}

/**
 * The signing key a bearer JWT names, its issuer and key id (`iss kid`), read without verifying
 * anything; null for a token that names none (not a JWT, or no `kid`), which no Microsoft issuer
 * sends and which is refused without a check.
 */
export function signingKeyOf(authorization: string): string | null {
  const token = /^Bearer\s+(\S+)$/i.exec(authorization.trim())?.[1];
  const [header, payload] = token?.split('.') ?? [];
  if (header === undefined || payload === undefined) return null;
  try {
    const { kid } = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { kid?: unknown };
    const { iss } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { iss?: unknown };
    return typeof kid === 'string' && typeof iss === 'string' ? `${iss} ${kid}` : null;
  } catch {
    return null;
  }
}

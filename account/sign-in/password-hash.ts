import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * Cost of new hashes: scrypt with N = 2^15, r = 8, p = 3, which OWASP's password storage cheat
 * sheet gives as as strong as N = 2^17, p = 1 for a quarter of the memory (32 MiB against 128 MiB
 * per hash at once); about a tenth of a second.
 */
const defaults = { log2N: 15, r: 8, p: 3 };
const keyLength = 32;

function derive(password: string, salt: Buffer, log2N: number, r: number, p: number): Promise<Buffer> {
  const options: ScryptOptions = { N: 2 ** log2N, r, p, maxmem: 2 * 128 * 2 ** log2N * r };
  return new Promise((resolve, reject) => {
    // Unicode normalization, so that the same password typed on two keyboards is the same password.
    scrypt(password.normalize('NFKC'), salt, keyLength, options, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/**
 * A scrypt hash of a password with a random salt, as `scrypt$<log2 N>$<r>$<p>$<salt>$<hash>`
 * (base64url): the parameters travel with the hash, so that stronger ones can come later.
 */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const { log2N, r, p } = defaults;
  const key = await derive(password, salt, log2N, r, p);
  return ['scrypt', log2N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/**
 * Whether a stored hash was made with other parameters than new ones are: hashed again at the next
 * chance (a sign-in, or the same password set again), so that hashes of an earlier release do not
 * stay weaker.
 */
export function needsRehash(stored: string): boolean {
  const { log2N, r, p } = defaults;
  return !stored.startsWith(`scrypt$${log2N}$${r}$${p}$`);
}

const small = (text: string | undefined, max: number): number | null =>
  text !== undefined && /^\d{1,2}$/.test(text) && Number(text) >= 1 && Number(text) <= max
    ? Number(text)
    : null;

/**
 * The parallelism of the extra derivation that makes a check against a hash of `log2N`, `r` and
 * `p` cost what one against a new hash does, or 0: a hash of an earlier release (p = 1) would
 * otherwise be checked faster than the decoy of an unknown email, and tell the two apart. Only
 * hashes of today's N and r are padded: no release made others.
 */
export function paddingFor(log2N: number, r: number, p: number): number {
  return log2N === defaults.log2N && r === defaults.r ? Math.max(0, defaults.p - p) : 0;
}

/**
 * Whether `password` is the one `stored` was made from, compared in constant time, in the time a
 * check against a new hash takes ({@link paddingFor}). False for a stored value that is not a hash
 * of {@link hashPassword} (or asks for absurd parameters).
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, log2NText, rText, pText, saltText, hashText] = stored.split('$');
  const log2N = small(log2NText, 20);
  const r = small(rText, 16);
  const p = small(pText, 4);
  if (scheme !== 'scrypt' || log2N === null || r === null || p === null || !saltText || !hashText)
    return false;
  const expected = Buffer.from(hashText, 'base64url');
  if (expected.length !== keyLength) return false;
  const key = await derive(password, Buffer.from(saltText, 'base64url'), log2N, r, p);
  const padding = paddingFor(log2N, r, p);
  if (padding > 0) await derive(password, randomBytes(16), log2N, r, padding);
  return timingSafeEqual(key, expected);
}

import { randomFillSync } from 'node:crypto';

const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Bytes at or above this would favour the first characters of the alphabet (256 = 4 × 62 + 8): redrawn. */
const unbiasedBelow = alphabet.length * Math.floor(256 / alphabet.length);

/**
 * Random bytes drawn from the operating system a page at a time: a call per character cost more
 * than the rest of a send. Each byte is handed out once.
 */
const pool = new Uint8Array(4096);
let poolOffset = pool.length;

function randomByte(): number {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const byte = pool[poolOffset] ?? 0;
  poolOffset += 1;
  return byte;
}

/**
 * `length` base62 characters from a cryptographically secure source (5.95 bits each), uniformly.
 * Built from character codes in one step: a string grown a character at a time is a rope of a
 * dozen nodes (~450 bytes for an id) until something flattens it, and stores keep ids by the million.
 */
export function randomBase62(length: number): string {
  let out = '';
  const codes: number[] = [];
  while (out.length + codes.length < length) {
    const byte = randomByte();
    if (byte >= unbiasedBelow) continue;
    codes.push(alphabet.charCodeAt(byte % alphabet.length));
    // Bounded, so that a long string never spreads more arguments than a call takes.
    if (codes.length === 1024) {
      out += String.fromCharCode(...codes);
      codes.length = 0;
    }
  }
  return out + String.fromCharCode(...codes);
}

/** Generates the identifiers of the library; injectable so that tests can predict them. */
export interface IdGenerator {
  /** `notif_` + 24 base62 characters (142 bits). */
  notificationId(): string;
  /** `req_` + 24 base62 characters (142 bits). */
  requestId(): string;
  /** An opaque unique id with the given prefix, for internal records. */
  internalId(prefix: string): string;
}

/** The secure default. */
export const randomIds: IdGenerator = {
  notificationId: () => `notif_${randomBase62(24)}`,
  requestId: () => `req_${randomBase62(24)}`,
  internalId: (prefix) => `${prefix}_${randomBase62(24)}`,
};

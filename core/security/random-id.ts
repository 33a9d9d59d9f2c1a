import { Buffer } from 'node:buffer';
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

/** Where an id is written before it is read out as a string; grown for longer ids. */
let scratch = Buffer.allocUnsafe(64);

/**
 * `prefix` followed by `length` base62 characters from a cryptographically secure source (5.95 bits
 * each), uniformly. Written as bytes and read out as one flat string: built from character codes or
 * by concatenating the prefix, an id would take a list of codes, and a rope that a store keeping ids
 * by the million flattens into a copy of its own (about 500 bytes allocated per id, where the string
 * itself is 48).
 */
export function randomBase62(length: number, prefix = ''): string {
  const size = prefix.length + length;
  if (scratch.length < size) scratch = Buffer.allocUnsafe(size);
  let filled = scratch.write(prefix, 0, 'latin1');
  while (filled < size) {
    const byte = randomByte();
    if (byte >= unbiasedBelow) continue;
    scratch[filled] = alphabet.charCodeAt(byte % alphabet.length);
    filled += 1;
  }
  return scratch.toString('latin1', 0, size);
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
  notificationId: () => randomBase62(24, 'notif_'),
  requestId: () => randomBase62(24, 'req_'),
  internalId: (prefix) => randomBase62(24, `${prefix}_`),
};

import { randomInt } from 'node:crypto';

const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` base62 characters from a cryptographically secure source (5.95 bits each). */
export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i += 1) out += alphabet[randomInt(alphabet.length)];
  return out;
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

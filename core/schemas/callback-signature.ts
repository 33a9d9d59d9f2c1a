import { createHmac } from 'node:crypto';

const secretPrefix = 'whsec_';
/** Base64 in groups of four, the last one padded or not (a lone character in a group encodes nothing). */
const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

/**
 * The fewest key bytes a secret may encode: Standard Webhooks asks for 24 to 64, and the service
 * draws 32. A secret garbled or cut short (`whsec_A` encodes no byte at all, and an HMAC with an
 * empty key is one anybody can compute) must not pass for one.
 */
const fewestKeyBytes = 24;

/**
 * The signing key bytes a `whsec_…` callback secret encodes (the prefix is optional).
 *
 * @throws TypeError when the secret is not base64 after its prefix, or encodes fewer than 24 bytes.
 */
export function callbackSecretKey(secret: string): Buffer {
  const encoded = secret.startsWith(secretPrefix) ? secret.slice(secretPrefix.length) : secret;
  const key = base64Pattern.test(encoded) ? Buffer.from(encoded, 'base64') : null;
  if (key === null || key.length < fewestKeyBytes) {
    throw new TypeError(
      `The callback secret is not \`whsec_\` + the base64 of at least ${fewestKeyBytes} bytes`,
    );
  }
  return key;
}

const bytesOf = (body: string | Uint8Array): Uint8Array =>
  typeof body === 'string' ? Buffer.from(body, 'utf8') : body;

/**
 * Base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` keyed with the secret's bytes: the Standard
 * Webhooks signature. The one computation behind both the service's signing and the client's check.
 */
export function callbackSignature(
  key: Uint8Array,
  id: string,
  timestamp: string,
  body: string | Uint8Array,
): string {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(bytesOf(body)).digest('base64');
}

/** What {@link signCallback} signs. */
export interface CallbackToSign {
  /** `webhook-id`. */
  id: string;
  /** `webhook-timestamp`: Unix seconds, or a Date. */
  timestamp: number | Date;
  /** The exact body bytes that are sent. */
  body: string | Uint8Array;
}

/**
 * The `webhook-signature` header value (`v1,<base64>`) of a callback signed with `secret`.
 *
 * @throws TypeError when `secret` is not `whsec_` + the base64 of at least 24 bytes.
 */
export function signCallback(secret: string, message: CallbackToSign): string {
  const seconds =
    message.timestamp instanceof Date ? Math.floor(message.timestamp.getTime() / 1000) : message.timestamp;
  return `v1,${callbackSignature(callbackSecretKey(secret), message.id, String(seconds), message.body)}`;
}

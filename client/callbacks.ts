import { timingSafeEqual } from 'node:crypto';
import { callbackSecretKey, callbackSignature } from '../core/schemas/callback-signature.js';
import { checked } from './client-settings.js';
import { CallbackVerificationError } from './errors.js';
import type { CallbackEvent, CallbackHeaders, VerifyCallbackOptions } from './types.js';

/** A header's value, whatever the spelling of its name; several values are joined with a space. */
function headerValue(headers: CallbackHeaders, name: string): string | undefined {
  // Any Fetch-style Headers (the global one, undici's, another realm's): `instanceof` knows only one.
  if (typeof headers.get === 'function') return (headers as Headers).get(name) ?? undefined;
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    values.push(...(Array.isArray(value) ? value : [value]));
  }
  return values.length === 0 ? undefined : values.join(' ');
}

/** The base64 parts of every `v1,` signature in a `webhook-signature` header. */
function v1Signatures(header: string): string[] {
  const found: string[] = [];
  for (const token of header.split(/\s+/)) {
    // Node joins repeated headers with ", ": tolerate the trailing comma that leaves.
    const match = /^v1,([A-Za-z0-9+/]+={0,2}),?$/.exec(token);
    if (match?.[1] !== undefined) found.push(match[1]);
  }
  return found;
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function isCallbackEvent(value: unknown): value is CallbackEvent {
  if (typeof value !== 'object' || value === null) return false;
  const body = value as Record<string, unknown>;
  return (
    body.type === 'request.finished' &&
    typeof body.request_id === 'string' &&
    body.status === 'finished' &&
    (body.external_reference_id === undefined || typeof body.external_reference_id === 'string') &&
    Array.isArray(body.responses) &&
    typeof body.finished_at === 'string'
  );
}

/**
 * Checks a completion callback and returns its body. Pass the body exactly as received (the raw
 * bytes or their text, never a re-serialized object) and the request's headers.
 *
 * Throws a {@link CallbackVerificationError} when a `webhook-*` header is missing, the timestamp is
 * more than `toleranceSeconds` away from now, no `v1` signature in `webhook-signature` matches, or
 * the body is not a callback. Throws a `TypeError` when `secret` is not the base64 of at least 24
 * bytes (the service's encode 32), after the `whsec_` that the service's secrets begin with or
 * without it (as the standardwebhooks library, a bare one is taken too), and a `RangeError` when
 * `toleranceSeconds` is no number of at least 0 (`NaN` would accept any timestamp; `Infinity`
 * accepts any on purpose).
 * Deduplicate on the `webhook-id` header: a callback may arrive more than once.
 */
export function verifyCallback(
  secret: string,
  headers: CallbackHeaders,
  rawBody: string | Uint8Array,
  options: VerifyCallbackOptions = {},
): CallbackEvent {
  const key = callbackSecretKey(secret);
  const tolerance = checked('verifyCallback: toleranceSeconds', options.toleranceSeconds, 300, 0, true);
  const id = headerValue(headers, 'webhook-id');
  const timestamp = headerValue(headers, 'webhook-timestamp');
  const signatureHeader = headerValue(headers, 'webhook-signature');
  const missing = [
    id ? undefined : 'webhook-id',
    timestamp ? undefined : 'webhook-timestamp',
    signatureHeader ? undefined : 'webhook-signature',
  ].filter((name) => name !== undefined);
  if (!id || !timestamp || !signatureHeader) {
    throw new CallbackVerificationError('missing_headers', `Missing header(s): ${missing.join(', ')}`);
  }

  if (!/^\d{1,15}$/.test(timestamp)) {
    throw new CallbackVerificationError('invalid_timestamp', 'webhook-timestamp is not Unix seconds');
  }
  const nowSeconds = Math.floor((options.now ?? Date.now)() / 1000);
  const sentAt = Number(timestamp);
  if (nowSeconds - sentAt > tolerance) {
    throw new CallbackVerificationError('timestamp_too_old', 'webhook-timestamp is too old');
  }
  if (sentAt - nowSeconds > tolerance) {
    throw new CallbackVerificationError('timestamp_too_new', 'webhook-timestamp is in the future');
  }

  const candidates = v1Signatures(signatureHeader);
  if (candidates.length === 0) {
    throw new CallbackVerificationError('malformed_signature', 'webhook-signature carries no v1 signature');
  }
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  const expected = callbackSignature(key, id, timestamp, body);
  let matched = false;
  for (const candidate of candidates) matched = sameText(candidate, expected) || matched;
  if (!matched) throw new CallbackVerificationError('signature_mismatch', 'No signature matches');

  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    throw new CallbackVerificationError('invalid_body', 'The body is not JSON');
  }
  if (!isCallbackEvent(parsed)) {
    throw new CallbackVerificationError('invalid_body', 'The body is not a request.finished callback');
  }
  return parsed;
}

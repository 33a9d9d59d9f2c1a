import { createHmac, timingSafeEqual } from 'node:crypto';

/** How far Slack's request timestamp may be from our clock, either way (Slack's own advice). */
export const signatureToleranceMs = 5 * 60_000;

const TIMESTAMP = /^\d{1,12}$/;
const SIGNATURE = /^v0=([0-9a-f]{64})$/;

/** What {@link verifySlackSignature} checks. */
export interface SlackSignedRequest {
  /** The `X-Slack-Request-Timestamp` header: Unix seconds. */
  timestamp: string | undefined;
  /** The `X-Slack-Signature` header: `v0=` and a hex HMAC-SHA256. */
  signature: string | undefined;
  /** The raw body, exactly as received. */
  body: Uint8Array;
}

/** The verdict on a request: fine, or why it is refused (the `details` of a 401). */
export type SlackSignatureVerdict = { ok: true } | { ok: false; details: string };

/**
 * Checks that a request comes from Slack (https://api.slack.com/authentication/verifying-requests-from-slack):
 * `v0=` + hex HMAC-SHA256, keyed with the app's signing secret, of `v0:{timestamp}:{raw body}`,
 * compared in constant time; and a timestamp within five minutes of `nowMs`, either way, so that a
 * captured request cannot be replayed later, nor one signed ahead of time used in the future.
 */
export function verifySlackSignature(
  signingSecret: string,
  request: SlackSignedRequest,
  nowMs: number,
): SlackSignatureVerdict {
  const { timestamp, signature } = request;
  if (timestamp === undefined || signature === undefined) {
    return { ok: false, details: 'Missing Slack signature headers' };
  }
  if (!TIMESTAMP.test(timestamp)) return { ok: false, details: 'Invalid Slack request timestamp' };
  if (Math.abs(nowMs - Number(timestamp) * 1000) > signatureToleranceMs) {
    return { ok: false, details: 'Slack request timestamp is too far from the current time' };
  }
  const given = SIGNATURE.exec(signature)?.[1];
  const expected = slackSignatureDigest(signingSecret, timestamp, request.body);
  if (given === undefined || !timingSafeEqual(Buffer.from(given, 'hex'), expected)) {
    return { ok: false, details: 'Invalid Slack signature' };
  }
  return { ok: true };
}

/** The HMAC-SHA256 digest Slack signs a request with. */
export function slackSignatureDigest(signingSecret: string, timestamp: string, body: Uint8Array): Buffer {
  return createHmac('sha256', signingSecret).update(`v0:${timestamp}:`).update(body).digest();
}

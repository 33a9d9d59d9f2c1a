import { createHmac } from 'node:crypto';

/** The signing secret the Slack tests give the transport (and sign requests with, as Slack would). */
export const testSigningSecret = 'test-signing-secret-0123456789abcdef';

/**
 * The headers Slack sends with an interactivity request: the request timestamp (Unix seconds) and
 * `v0=` + hex HMAC-SHA256 of `v0:{timestamp}:{body}` keyed with the app's signing secret.
 */
export function slackSignatureHeaders(
  body: string,
  timestampSeconds: number,
  secret: string = testSigningSecret,
): Record<string, string> {
  const timestamp = String(Math.floor(timestampSeconds));
  const signature = createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex');
  return {
    'content-type': 'application/x-www-form-urlencoded',
    'x-slack-request-timestamp': timestamp,
    'x-slack-signature': `v0=${signature}`,
  };
}

import type { Notifier } from '../../core/index.js';
import { testKeys } from './test-seed.js';

/**
 * Sends an interactive request through the notifier's own HTTP handler, as alice of the test seed,
 * and answers its `request_id`: for tests that drive the core without a host.
 */
export async function sendInteractive(
  notifier: Notifier,
  recipients: readonly string[],
  timeoutMinutes = 60,
): Promise<string> {
  const sent = await notifier.handle({
    method: 'POST',
    url: '/api/notify',
    headers: { 'x-api-key': testKeys.alice, 'content-type': 'application/json' },
    body: [
      JSON.stringify({
        user_emails: recipients,
        message: 'Ship it?',
        response_request: {
          options: [
            { text: 'Yes', value: 'yes' },
            { text: 'No', value: 'no' },
          ],
          timeout_minutes: timeoutMinutes,
        },
      }),
    ],
    clientAddress: '127.0.0.1',
  });
  const body = JSON.parse(String(sent?.body)) as { request_id?: string; details?: string };
  if (!body.request_id) throw new Error(`send refused: ${sent?.status} ${body.details}`);
  return body.request_id;
}

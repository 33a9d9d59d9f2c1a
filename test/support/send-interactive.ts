import type { Notifier } from '../../core/index.js';
import { interactiveBody, post } from './api-requests.js';

/**
 * Sends an interactive request through the notifier's own HTTP handler, as alice of the test seed,
 * and answers its `request_id`: for tests that drive the core without a host.
 */
export async function sendInteractive(
  notifier: Notifier,
  recipients: readonly string[],
  timeoutMinutes = 60,
): Promise<string> {
  const sent = await post(notifier, interactiveBody(recipients, timeoutMinutes));
  const body = JSON.parse(String(sent?.body)) as { request_id?: string; details?: string };
  if (!body.request_id) throw new Error(`send refused: ${sent?.status} ${body.details}`);
  return body.request_id;
}

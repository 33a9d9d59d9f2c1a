import type { CoreContext } from '../context.js';
import type { NotifyRequest } from '../schemas/notify-request.js';
import { type AdmittedRequest, admitWithRecipients } from './authenticate.js';
import { recipientSpellings } from './resolve-recipients.js';

/** An admitted send: its caller, its validated body, and the users its recipients matched when known. */
export interface AdmittedSend extends AdmittedRequest {
  input: NotifyRequest;
}

/**
 * Admits a send (docs/http-api.md#post-apinotify) as `admitRequest` does, reading its body first so
 * that the admission looks its recipients up in the same storage step. The order of checks stays
 * what a caller sees (docs/behaviour.md#order-of-checks): a refused body is answered only once the
 * request is admitted, and a refused admission is answered whatever the body.
 *
 * @param readBody parses and validates the body; what it throws is thrown after the admission.
 */
export async function admitSend(
  context: CoreContext,
  apiKey: string | undefined,
  clientAddress: string,
  readBody: () => NotifyRequest,
): Promise<AdmittedSend> {
  let body: { input: NotifyRequest } | { error: unknown };
  try {
    body = { input: readBody() };
  } catch (error) {
    body = { error };
  }
  const recipientEmails =
    'input' in body ? [...recipientSpellings(body.input.user_emails).keys()] : undefined;
  const admitted = await admitWithRecipients(context, apiKey, clientAddress, recipientEmails);
  if ('error' in body) throw body.error;
  return { ...admitted, input: body.input };
}

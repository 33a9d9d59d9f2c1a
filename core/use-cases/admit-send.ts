import type { CoreContext } from '../context.js';
import type { NotifyRequest } from '../schemas/notify-request.js';
import { type AdmittedRequest, admitWithExtras } from './authenticate.js';
import { recipientSpellings } from './resolve-recipients.js';
import { idempotencyClaim, type SendPreparation } from './send-idempotently.js';

/**
 * An admitted send: its caller, its validated body, the users its recipients matched when known,
 * and the claim of its idempotency key made in the admission's step, if any.
 */
export interface AdmittedSend extends Omit<AdmittedRequest, 'idempotency'> {
  input: NotifyRequest;
  claimed?: SendPreparation['claimed'];
}

/**
 * Admits a send (docs/http-api.md#post-apinotify) as `admitRequest` does, reading its body first so
 * that the admission looks its recipients up in the same storage step. The order of checks stays
 * what a caller sees (docs/behaviour.md#order-of-checks): a refused body is answered only once the
 * request is admitted, and a refused admission is answered whatever the body.
 *
 * @param readBody parses and validates the body; what it throws is thrown after the admission.
 * @param idempotencyKey a well-formed `Idempotency-Key`: acquired in the admission's step too when the
 *   body is valid and names no callback URL, whose check comes before idempotency and may still
 *   refuse the send (a refusal must leave the key unused). Whoever gets `claimed` back must pass it
 *   to `sendIdempotently`, which ends the acquisition.
 */
export async function admitSend(
  context: CoreContext,
  apiKey: string | undefined,
  clientAddress: string,
  readBody: () => NotifyRequest,
  idempotencyKey?: string,
): Promise<AdmittedSend> {
  let body: { input: NotifyRequest } | { error: unknown };
  try {
    body = { input: readBody() };
  } catch (error) {
    body = { error };
  }
  if ('error' in body) {
    await admitWithExtras(context, apiKey, clientAddress);
    throw body.error;
  }
  const { input } = body;
  const recipientEmails = [...recipientSpellings(input.user_emails).keys()];
  const claim =
    idempotencyKey === undefined || input.response_request?.callback_url !== undefined
      ? undefined
      : idempotencyClaim(context, input, idempotencyKey);
  const { idempotency: acquisition, ...admitted } = await admitWithExtras(context, apiKey, clientAddress, {
    recipientEmails,
    idempotency: claim,
  });
  return { ...admitted, input, ...(claim === undefined ? {} : { claimed: { claim, acquisition } }) };
}

import type { CoreContext } from '../context.js';
import type { InteractiveRequest } from '../domain/interactive-request.js';
import { admittedRequest, type RequestToCreate } from '../ports/admission-store.js';
import type { NotifyRequest } from '../schemas/notify-request.js';
import { type AdmittedRequest, admitWithExtras } from './authenticate.js';
import { checkCallbackOfBody } from './check-callback-url.js';
import { recipientSpellings } from './resolve-recipients.js';
import { idempotencyClaim, type SendPreparation } from './send-idempotently.js';
import { newSendId, requestDraft, timeoutDue } from './send-notification.js';

/**
 * An admitted send: its caller, its validated body, the users its recipients matched when known,
 * the claim of its idempotency key made in the admission's step, if any, and its interactive
 * request when the admission stored it.
 */
export interface AdmittedSend extends Omit<AdmittedRequest, 'idempotency' | 'created'> {
  input: NotifyRequest;
  claimed?: SendPreparation['claimed'];
  created?: InteractiveRequest;
}

/** What a send presented besides its body, as far as its admission is concerned. */
export interface SendAdmissionOptions {
  /**
   * A well-formed `Idempotency-Key`: acquired in the admission's step too when the body is valid
   * and names no callback URL, or one the service may accept: its check still follows and may refuse
   * the send, whose key then keeps that answer (`checkCallbackOfSend`), as every other `422` of a
   * send does.
   */
  idempotencyKey?: string;
  /**
   * False when the send is to be refused after its admission whatever the admission finds (a
   * malformed `Idempotency-Key`): its interactive request is then not stored in the admission's step.
   */
  mayStore: boolean;
}

/**
 * Admits a send (docs/http-api.md#post-apinotify) as `admitWithExtras` does, reading its body first so
 * that the admission looks its recipients up, and stores an interactive send's request, in the same
 * storage step. The order of checks stays what a caller sees (docs/behaviour.md#order-of-checks): a
 * refused body is answered only once the request is admitted, and a refused admission is answered
 * whatever the body. The request is stored only when nothing after the admission can refuse the
 * send but its delivery and its callback URL, checked after the admission (a refused one withdraws
 * the request and keeps its 422 under the key); and the store stores it only when every recipient is known
 * and the key, if any, was acquired for a new attempt.
 *
 * @param readBody parses and validates the body; what it throws is thrown after the admission.
 * Whoever gets `claimed` back must pass it to `sendIdempotently`, which ends the acquisition, and
 * `created` with it.
 */
export function admitSend(
  context: CoreContext,
  apiKey: string | undefined,
  clientAddress: string,
  readBody: () => NotifyRequest,
  { idempotencyKey, mayStore }: SendAdmissionOptions = { mayStore: true },
): Promise<AdmittedSend> {
  let body: { input: NotifyRequest } | { error: unknown };
  try {
    const input = readBody();
    checkCallbackOfBody(context, input);
    body = { input };
  } catch (error) {
    body = { error };
  }
  if ('error' in body) {
    const { error } = body;
    return admitWithExtras(context, apiKey, clientAddress).then(() => {
      throw error;
    });
  }
  try {
    const { input } = body;
    const spellings = recipientSpellings(input.user_emails);
    const recipientEmails = [...spellings.keys()];
    const claim = idempotencyKey === undefined ? undefined : idempotencyClaim(context, input, idempotencyKey);
    const createRequest: RequestToCreate | undefined =
      input.response_request !== undefined && mayStore
        ? draftWithTimeout(context, input, spellings, claim?.sendId ?? newSendId(context, input))
        : undefined;
    return admitWithExtras(context, apiKey, clientAddress, {
      recipientEmails,
      idempotency: claim,
      createRequest,
    }).then(({ principal, users, idempotency: acquisition, created }) => {
      // Field by field: a spread followed by more fields takes V8's slow path (see `nextVersion`).
      const send: AdmittedSend = { principal, input };
      if (users !== undefined) send.users = users;
      if (claim !== undefined) send.claimed = { claim, acquisition };
      if (created === true && createRequest !== undefined) {
        send.created = admittedRequest(createRequest.request, principal);
      }
      return send;
    });
  } catch (error) {
    // A failure before the admission is a rejection too: a caller waits on the promise alone.
    return Promise.reject(error);
  }
}

function draftWithTimeout(
  context: CoreContext,
  input: NotifyRequest,
  spellings: ReadonlyMap<string, string>,
  id: string,
): RequestToCreate {
  const request = requestDraft(
    context,
    input,
    [...spellings].map(([key, email]) => ({ key, email })),
    id,
  );
  return { request, due: timeoutDue(request) };
}

import { callbackUrlForm, checkCallbackTarget } from '../callbacks/check-callback-target.js';
import type { CoreContext } from '../context.js';
import type { Principal } from '../domain/directory.js';
import type { InteractiveRequest } from '../domain/interactive-request.js';
import { isNotifyError, NotifyError } from '../errors.js';
import type { NotifyRequest } from '../schemas/notify-request.js';
import type { SendPreparation } from './send-idempotently.js';
import { withdrawRequest } from './withdraw-request.js';

/** DNS answers slower than this refuse the callback URL at submission. */
const lookupTimeoutMs = 5_000;

/**
 * What of a send's callback URL is judged with its body, before its idempotency record is looked up
 * (docs/behaviour.md#order-of-checks): its form (400), and that the service delivers callbacks at all
 * (422). Where it points is checked after the admission, for a send that is to run.
 */
export function checkCallbackOfBody(context: CoreContext, input: NotifyRequest): void {
  const url = input.response_request?.callback_url;
  if (url === undefined) return;
  callbackUrlForm(url, context.callbacks?.allowInsecure ?? false);
  if (!context.callbacks) {
    throw new NotifyError(
      'unprocessable',
      'response_request.callback_url: this service does not deliver callbacks',
    );
  }
}

/** Validates where a callback URL points at submission (docs/http-api.md#request-body), for a send that is to run. */
async function checkCallbackUrl(context: CoreContext, url: string): Promise<void> {
  // Checked with the body already: a service without callbacks refused the send then.
  if (!context.callbacks) return;
  try {
    await checkCallbackTarget(url, {
      resolver: context.callbacks.resolver,
      allowInsecure: context.callbacks.allowInsecure,
      lookupTimeoutMs,
    });
  } catch (error) {
    // A lookup's failure is kept from the caller's 422 (which names only the rule), not from the operator.
    if (error instanceof NotifyError && error.cause !== undefined) {
      context.logger.info('callback_url refused: its host could not be resolved', {
        error: String(error.cause),
      });
    }
    throw error;
  }
}

/** What the admission of a send took that a refused callback URL settles. */
export interface SendAdmissionHolds {
  /** The send's request, when the admission stored it. */
  created?: InteractiveRequest;
  /** The claim of its idempotency key, and what the admission's acquisition of it found. */
  claimed?: SendPreparation['claimed'];
}

/**
 * Checks the callback URL of a send once it is admitted. When the address is refused, what the
 * admission took for the send is settled before the refusal is thrown: a request it stored is
 * withdrawn (no copy of it went out and its id was never answered, so it must neither time out
 * nor call back), and an idempotency key it acquired for a new attempt keeps the refusal as its
 * answer, as every other `422` of a send does (docs/behaviour.md#idempotency), but for a lookup
 * that failed; one it acquired to resume an earlier attempt is left as that attempt left it.
 */
export async function checkCallbackOfSend(
  context: CoreContext,
  url: string,
  principal: Principal,
  { created, claimed }: SendAdmissionHolds,
): Promise<void> {
  try {
    await checkCallbackUrl(context, url);
  } catch (error) {
    await Promise.all([
      created === undefined ? undefined : withdrawRequest(context, created),
      claimed === undefined ? undefined : settleKey(context, principal, claimed, error),
    ]);
    throw error;
  }
}

/**
 * Ends the admission's acquisition of a key once its callback address was refused: a new record
 * keeps the refusal of its address as its answer, replayed to a repeat, but for a lookup that failed
 * (DNS down, no answer in time: the service's own resolver may be what failed), which gives it back
 * unused, as does a failure of any other kind; and a resumed attempt (acquired under the
 * send id of an earlier one, which may have reached some recipients) is failed again, as the
 * earlier attempt left it, so that its next repeat resumes it. Should the store fail, the record
 * stays running with this body: a repeat is answered 409 until its lease ends, then only this body
 * takes it over (and is refused again while its address is), and another body is refused as a
 * different one until the record expires. Logged, as the caller cannot tell.
 */
async function settleKey(
  context: CoreContext,
  principal: Principal,
  { claim, acquisition }: NonNullable<SendPreparation['claimed']>,
  refusal: unknown,
): Promise<void> {
  if (acquisition?.outcome !== 'acquired') return;
  const scope = { organizationId: principal.organization.id, key: claim.key };
  const store = context.storage.idempotency;
  try {
    if (acquisition.sendId !== claim.sendId) await store.fail(scope, claim.sendId);
    else if (isNotifyError(refusal, 'unprocessable') && refusal.cause === undefined) {
      await store.complete(scope, claim.sendId, {
        status: 422,
        body: JSON.stringify({ status: 'error', details: refusal.details }),
      });
    } else await store.release(scope, claim.sendId);
  } catch (error) {
    context.logger.warn('could not keep the answer of a refused callback_url under its Idempotency-Key', {
      organizationId: scope.organizationId,
      error: String(error),
    });
  }
}

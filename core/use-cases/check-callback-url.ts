import { checkCallbackTarget } from '../callbacks/check-callback-target.js';
import type { CoreContext } from '../context.js';
import { timeoutItemId } from '../domain/due-work.js';
import type { InteractiveRequest } from '../domain/interactive-request.js';
import { NotifyError } from '../errors.js';

/** DNS answers slower than this refuse the callback URL at submission. */
const lookupTimeoutMs = 5_000;

/** Validates a callback URL at submission (docs/http-api.md#request-body); part of body validation, before idempotency. */
async function checkCallbackUrl(context: CoreContext, url: string): Promise<void> {
  if (!context.callbacks) {
    throw new NotifyError(
      'unprocessable',
      'response_request.callback_url: this service does not deliver callbacks',
    );
  }
  await checkCallbackTarget(url, {
    resolver: context.callbacks.resolver,
    allowInsecure: context.callbacks.allowInsecure,
    lookupTimeoutMs,
  });
}

/**
 * Checks the callback URL of a send once it is admitted. When the admission stored the send's
 * request already (`created`) and the address is refused, the request is withdrawn before the
 * refusal is thrown: no copy of it went out and its id was never answered, so it must neither time
 * out nor call back.
 */
export async function checkCallbackOfSend(
  context: CoreContext,
  url: string,
  created: InteractiveRequest | undefined,
): Promise<void> {
  try {
    await checkCallbackUrl(context, url);
  } catch (error) {
    if (created) await withdrawRequest(context, created);
    throw error;
  }
}

/**
 * Finishes `request` without an event, cancelling its timeout, and lets it expire at once. Should
 * the store fail, the request is left to time out unseen: its callback, were it ever due, checks
 * the address again before connecting, and is refused by the same rule.
 */
async function withdrawRequest(context: CoreContext, request: InteractiveRequest): Promise<void> {
  const withdrawn: InteractiveRequest = {
    ...request,
    version: request.version + 1,
    status: 'finished',
    finishedAt: context.clock.now(),
  };
  try {
    await context.storage.requests.updateRequest(
      withdrawn,
      request.version,
      { enqueue: [], cancel: [timeoutItemId(request.id)] },
      { ttlMs: 1 },
    );
  } catch (error) {
    context.logger.warn('could not withdraw the request of a refused callback_url; it times out unseen', {
      requestId: request.id,
      error: String(error),
    });
  }
}

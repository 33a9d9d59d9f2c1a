import { checkCallbackTarget } from '../callbacks/check-callback-target.js';
import type { CoreContext } from '../context.js';
import { NotifyError } from '../errors.js';

/** DNS answers slower than this refuse the callback URL at submission. */
const lookupTimeoutMs = 5_000;

/** Validates a callback URL at submission (docs/http-api.md#request-body); part of body validation, before idempotency. */
export async function checkCallbackUrl(context: CoreContext, url: string): Promise<void> {
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

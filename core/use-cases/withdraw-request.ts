import type { CoreContext } from '../context.js';
import { timeoutItemId } from '../domain/due-work.js';
import { type InteractiveRequest, nextVersion } from '../domain/interactive-request.js';

/**
 * Finishes `request` without an event, cancelling its timeout, and lets it expire at once: no copy
 * of it went out. Should the store fail, the request is left to time out unseen: its callback, were
 * it ever due, finds it reached nobody, and for a refused address checks the address again before
 * connecting, and is refused by the same rule.
 */
export async function withdrawRequest(context: CoreContext, request: InteractiveRequest): Promise<void> {
  const withdrawn = nextVersion(request, request.recipients, context.clock.now());
  try {
    await context.storage.requests.updateRequest(
      withdrawn,
      request.version,
      { enqueue: [], cancel: [timeoutItemId(request.id)] },
      { ttlMs: 1 },
    );
  } catch (error) {
    context.logger.warn('could not withdraw a request nothing was sent of; it times out unseen', {
      requestId: request.id,
      error: String(error),
    });
  }
}

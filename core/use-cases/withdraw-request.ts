import type { CoreContext } from '../context.js';
import { timeoutItemId } from '../domain/due-work.js';
import { type InteractiveRequest, nextVersion } from '../domain/interactive-request.js';
import type { DueWorkChanges } from '../ports/request-store.js';

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

/**
 * Whether `request` is one {@link withdrawRequest} wrote: finished with nobody's answer and nobody
 * expired, as no click and no timeout finishes one (a timeout expires everyone without an answer).
 */
const isWithdrawn = (request: InteractiveRequest): boolean =>
  request.finishedAt !== null &&
  request.recipients.every((recipient) => recipient.value === null && !recipient.expired);

/**
 * How long a request brought back lives beyond its deadline and its retention, should its timeout
 * never finish it (whose write sets the retention afresh): a store keeps no pending request
 * without a bound once a withdrawal gave it one, and a timeout run this late is none to wait for.
 */
const broughtBackMarginMs = 365 * 24 * 60 * 60_000;

/**
 * The request a resumed send finds under `id`, brought back to pending with its timeout scheduled
 * when it is one a withdrawal left (`due` answers the timeout of a request): a withdrawal expires
 * its request a millisecond after it by the store's clock (or later, should that clock stand
 * still), and a repeat that resumed it as it stands would answer an id that vanishes at once. Null
 * when there is none, or it expired while being brought back: the send stores it anew.
 */
export async function requestToResume(
  context: CoreContext,
  id: string,
  due: (request: InteractiveRequest) => DueWorkChanges,
): Promise<InteractiveRequest | null> {
  const stored = await context.storage.requests.getRequest(id);
  if (stored === null || !isWithdrawn(stored)) return stored;
  const pending = nextVersion(stored, stored.recipients, null);
  const ttlMs = Math.max(
    1,
    stored.expiresAt - context.clock.now() + context.retentionMs + broughtBackMarginMs,
  );
  const written = await context.storage.requests.updateRequest(pending, stored.version, due(pending), {
    ttlMs,
  });
  return written ? pending : null;
}

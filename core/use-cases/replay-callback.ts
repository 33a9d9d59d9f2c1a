import { keptWithRequest } from '../callbacks/request-retention.js';
import type { CoreContext } from '../context.js';
import { callbackItemId } from '../domain/due-work.js';
import type { FailedCallback } from '../ports/failed-callback-store.js';

/**
 * Starts the attempts of a failed callback afresh; false when no such failure is kept, or when its
 * request has passed its retention (there is nothing left to send: the failure is forgotten). The
 * request and the failure are read before the failure is taken, and the failure is put back when
 * taking it fails (the take may have been applied, its answer lost) or when it was taken but not
 * scheduled, so that a store error on the way loses no failure: the replay can be asked again.
 */
export async function replayCallback(context: CoreContext, requestId: string): Promise<boolean> {
  const { failedCallbacks, requests, dueWork } = context.storage;
  const request = await requests.getRequest(requestId);
  if (request === null) {
    if ((await failedCallbacks.take(requestId)) !== null) {
      context.logger.warn('callback not replayed: its request has passed its retention', { requestId });
    }
    return false;
  }
  const kept = await failedCallbacks.get(requestId);
  if (kept === null) return false;
  const putBack = async (error: unknown): Promise<never> => {
    await failedCallbacks.add(kept, keptWithRequest(context, request)).catch(() => undefined);
    throw error;
  };
  // Of concurrent replays, the one that takes the failure schedules the callback.
  if ((await failedCallbacks.take(requestId).catch(putBack)) === null) return false;
  await dueWork
    .enqueue([
      { id: callbackItemId(requestId), kind: 'callback', requestId, runAt: context.clock.now(), attempt: 0 },
    ])
    .catch(putBack);
  context.dueWork.poke();
  context.logger.info('callback replay scheduled', { requestId });
  return true;
}

/**
 * The failures kept, oldest first (of one organization when given), less those whose request has
 * passed its retention: those are taken from the store as they are found. Listing is an operator's
 * occasional look, so a read per failure is no cost that matters.
 */
export async function listFailedCallbacks(
  context: CoreContext,
  organizationId?: string,
): Promise<FailedCallback[]> {
  const { failedCallbacks, requests } = context.storage;
  const failures = await failedCallbacks.list(organizationId);
  const live = await Promise.all(failures.map((failure) => requests.getRequest(failure.requestId)));
  const gone = failures.filter((_, index) => live[index] === null);
  await Promise.all(gone.map((failure) => failedCallbacks.take(failure.requestId)));
  return failures.filter((_, index) => live[index] !== null);
}

import type { CoreContext } from '../context.js';
import { refreshItemId } from '../domain/due-work.js';
import type { InteractiveRequest } from '../domain/interactive-request.js';
import type { DueWorkResult } from '../due-work/due-work-runner.js';
import { requestViews } from '../request/message-view.js';
import { updateCopies } from './deliver-copies.js';

const second = 1000;
const minute = 60 * second;

/**
 * Pauses before each try to bring the copies of a request up to date after an update failed (a
 * chat platform briefly down). After the last one the copies are left as they are, and logged.
 */
const refreshDelaysMs = [5 * second, 30 * second, 2 * minute, 10 * minute, 30 * minute, 60 * minute] as const;

const jittered = (delayMs: number): number => Math.round(delayMs * (0.8 + 0.4 * Math.random()));

/**
 * Schedules a refresh of every copy of a request as durable due work, so that a failed update is
 * retried even if this instance stops. One pending refresh per request: scheduling again replaces it.
 */
export async function scheduleRefresh(context: CoreContext, requestId: string): Promise<void> {
  const delay = refreshDelaysMs[0];
  await context.storage.dueWork.enqueue([
    {
      id: refreshItemId(requestId),
      kind: 'refresh',
      requestId,
      runAt: context.clock.now() + jittered(delay),
      attempt: 0,
    },
  ]);
  context.dueWork.poke();
}

/**
 * Schedules a refresh for the `failed` copies of a request that could not be updated. A store that
 * cannot take it is logged, never thrown: the change those copies should show is stored already,
 * and whoever made it must not be told it failed. Answers whether the copies are covered: all
 * updated, or a refresh scheduled.
 */
export async function refreshLeftBehind(
  context: CoreContext,
  requestId: string,
  failed: number,
): Promise<boolean> {
  if (failed === 0) return true;
  return scheduleRefresh(context, requestId).then(
    () => true,
    (error: unknown) => {
      context.logger.error('could not schedule a refresh of copies left behind; they show an older state', {
        requestId,
        copies: failed,
        error: String(error),
      });
      return false;
    },
  );
}

/**
 * Shows a stored change of a request on the copies of `recipients`, or leaves it to a refresh. A
 * store that fails meanwhile (reading the copies, scheduling the refresh) neither fails the click or
 * timeout that made the change nor leaves the copies without a refresh when one can be scheduled.
 * Answers whether the copies are covered (see {@link refreshLeftBehind}): when not, the work that
 * made the change must stay to bring them up to date.
 */
export async function updateOrRefresh(
  context: CoreContext,
  request: InteractiveRequest,
  recipients: readonly string[],
): Promise<boolean> {
  const failed = await updateCopies(
    context,
    request.organizationId,
    request.id,
    recipients,
    requestViews(request),
  ).catch((error: unknown) => {
    context.logger.warn('copies not updated after a stored change; a refresh will', {
      requestId: request.id,
      error: String(error),
    });
    return recipients.length;
  });
  return refreshLeftBehind(context, request.id, failed);
}

/**
 * Runs a scheduled refresh: every copy of the request gets the view of its current state (copies
 * already showing it change nothing; transports refuse older views). Tries again later while some
 * copy still fails, up to the end of the schedule.
 */
export async function runRefresh(
  context: CoreContext,
  item: { requestId: string; attempt: number },
): Promise<DueWorkResult> {
  const request = await context.storage.requests.getRequest(item.requestId);
  if (!request) return { done: true };
  const failed = await updateCopies(
    context,
    request.organizationId,
    request.id,
    request.recipients.map((recipient) => recipient.key),
    requestViews(request),
  );
  if (failed === 0) return { done: true };
  const next = refreshDelaysMs[item.attempt + 1];
  if (next === undefined) {
    context.logger.error('gave up updating delivered messages; they show an older state', {
      requestId: request.id,
      copies: failed,
    });
    return { done: true };
  }
  return { done: false, retryAt: context.clock.now() + jittered(next) };
}

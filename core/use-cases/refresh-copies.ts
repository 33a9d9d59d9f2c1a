import type { CoreContext } from '../context.js';
import { refreshItemId } from '../domain/due-work.js';
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

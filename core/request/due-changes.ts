import { callbackItemId, pledgedRefreshItemId, timeoutItemId } from '../domain/due-work.js';
import type { InteractiveRequest } from '../domain/interactive-request.js';
import type { DueWorkChanges } from '../ports/request-store.js';
import type { RequestCommand, RequestEvent } from './events.js';

/**
 * How long after a write its pledged refresh runs unless the writer cancelled it: far longer than
 * a live process takes to update the copies, a platform's pauses for its rate limit and the
 * retries of its calls included, so that a refresh never doubles the calls of an update still
 * under way; the copies of a write whose process died wait that long.
 */
export const pledgedRefreshDelayMs = 10 * 60_000;

/**
 * Whether a write made for `event` pledges a refresh of the copies it changes: every event's but
 * that of a timeout run by its due item, which is itself what runs again.
 */
export const pledgesRefresh = (event: RequestEvent): boolean =>
  event.type !== 'timeout' || event.byRead === true;

/**
 * The commands that must be written atomically with the transition `event` made, as due-work
 * changes. A write whose copies must change also schedules their refresh (`pledgedRefreshItemId`),
 * which the writer cancels once it updated them: a write whose process died, or whose answer was
 * lost although it was stored, leaves it to run, so that no copy keeps showing an earlier state for
 * good. The timeout's own write needs neither: its item, which its worker holds leased, stays in
 * place, is completed once the copies are updated, and otherwise runs again and finds its request
 * finished (the notifier's timeout handler refreshes the copies then). A timeout a status read ran
 * holds no item: its write is a click's.
 */
export function dueChanges(
  next: InteractiveRequest,
  commands: readonly RequestCommand[],
  event: RequestEvent,
): DueWorkChanges {
  const changes: DueWorkChanges = { enqueue: [], cancel: [] };
  const ownTimeout = !pledgesRefresh(event);
  for (const command of commands) {
    if (command.type === 'cancel-timeout' && !ownTimeout) changes.cancel.push(timeoutItemId(next.id));
    if (command.type === 'enqueue-callback') {
      changes.enqueue.push({
        id: callbackItemId(next.id),
        kind: 'callback',
        requestId: next.id,
        runAt: command.runAt,
        attempt: 0,
      });
    }
    if (command.type === 'update-messages' && !ownTimeout) {
      changes.enqueue.push({
        id: pledgedRefreshItemId(next.id, next.version),
        kind: 'refresh',
        requestId: next.id,
        runAt: event.at + pledgedRefreshDelayMs,
        attempt: 0,
      });
    }
  }
  return changes;
}

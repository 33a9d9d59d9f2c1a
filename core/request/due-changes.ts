import { callbackItemId, timeoutItemId } from '../domain/due-work.js';
import type { DueWorkChanges } from '../ports/request-store.js';
import type { RequestCommand } from './events.js';

/** The commands that must be written atomically with a transition, as due-work changes. */
export function dueChanges(requestId: string, commands: readonly RequestCommand[]): DueWorkChanges {
  const changes: DueWorkChanges = { enqueue: [], cancel: [] };
  for (const command of commands) {
    if (command.type === 'cancel-timeout') changes.cancel.push(timeoutItemId(requestId));
    if (command.type === 'enqueue-callback') {
      changes.enqueue.push({
        id: callbackItemId(requestId),
        kind: 'callback',
        requestId,
        runAt: command.runAt,
        attempt: 0,
      });
    }
  }
  return changes;
}

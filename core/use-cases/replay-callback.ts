import type { CoreContext } from '../context.js';
import { callbackItemId } from '../domain/due-work.js';

/** Starts the attempts of a failed callback afresh; false when no such failure is kept. */
export async function replayCallback(context: CoreContext, requestId: string): Promise<boolean> {
  const failure = await context.storage.failedCallbacks.take(requestId);
  if (!failure) return false;
  await context.storage.dueWork.enqueue([
    { id: callbackItemId(requestId), kind: 'callback', requestId, runAt: context.clock.now(), attempt: 0 },
  ]);
  context.dueWork.poke();
  context.logger.info('callback replay scheduled', { requestId });
  return true;
}

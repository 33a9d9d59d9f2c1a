import type { CoreContext } from '../context.js';
import { normalizeEmail } from '../domain/directory.js';
import type { InteractiveRequest } from '../domain/interactive-request.js';
import type { Click, ClickOptions, ClickOutcome } from '../ports/chat-transport.js';
import { requestViews } from '../request/message-view.js';
import { updateCopies } from './deliver-copies.js';
import { refreshLeftBehind } from './refresh-copies.js';

/** A recipient's click, from any platform: one path through the request machine. */
export async function applyClick(
  context: CoreContext,
  click: Click,
  options: ClickOptions = {},
): Promise<ClickOutcome> {
  const recipient = normalizeEmail(click.recipient);
  const until = options.until ?? 'updated';
  const { outcome, request, changed } = await context.machine.dispatch(
    {
      type: 'click',
      requestId: click.requestId,
      recipient,
      value: click.value,
      at: context.clock.now(),
    },
    until,
  );
  // A click that changed nothing because the request had finished, or the choice was final, came
  // from a copy still offering buttons: its update was lost (the platform failed past every
  // refresh), or is on its way (a double click). Shown the request as it stands, the copy stops
  // offering them; what fails is left to a refresh, and a store that fails is only logged: the
  // click's answer stands.
  if (
    until === 'updated' &&
    !changed &&
    request !== null &&
    (outcome === 'final' || outcome === 'finished')
  ) {
    await showAsStored(context, request, recipient);
  }
  return outcome === 'expired' ? 'finished' : outcome;
}

/** Brings `recipient`'s copies of `request` to its stored view; never rejects. */
async function showAsStored(
  context: CoreContext,
  request: InteractiveRequest,
  recipient: string,
): Promise<void> {
  try {
    const failed = await updateCopies(
      context,
      request.organizationId,
      request.id,
      [recipient],
      requestViews(request),
    );
    await refreshLeftBehind(context, request.id, failed);
  } catch (error) {
    context.logger.warn('could not show a clicked copy its request as stored', {
      requestId: request.id,
      error: String(error),
    });
  }
}

import type { CoreContext } from '../context.js';
import { normalizeEmail } from '../domain/directory.js';
import type { Click, ClickOptions, ClickOutcome } from '../ports/chat-transport.js';
import { requestViews } from '../request/message-view.js';
import { updateCopies } from './deliver-copies.js';

/** A recipient's click, from any platform: one path through the request machine. */
export async function applyClick(
  context: CoreContext,
  click: Click,
  options: ClickOptions = {},
): Promise<ClickOutcome> {
  const recipient = normalizeEmail(click.recipient);
  const until = options.until ?? 'updated';
  const { outcome, request } = await context.machine.dispatch(
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
  // refresh). Shown the request as it stands, the copy stops offering them.
  if (until === 'updated' && request !== null && (outcome === 'final' || outcome === 'finished')) {
    await updateCopies(context, request.organizationId, request.id, [recipient], requestViews(request));
  }
  return outcome === 'expired' ? 'finished' : outcome;
}

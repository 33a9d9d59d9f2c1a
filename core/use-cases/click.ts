import type { CoreContext } from '../context.js';
import { normalizeEmail } from '../domain/directory.js';
import type { Click, ClickOptions, ClickOutcome } from '../ports/chat-transport.js';

/** A recipient's click, from any platform: one path through the request machine. */
export async function applyClick(
  context: CoreContext,
  click: Click,
  options: ClickOptions = {},
): Promise<ClickOutcome> {
  const { outcome } = await context.machine.dispatch(
    {
      type: 'click',
      requestId: click.requestId,
      recipient: normalizeEmail(click.recipient),
      value: click.value,
      at: context.clock.now(),
    },
    options.until,
  );
  return outcome === 'expired' ? 'finished' : outcome;
}

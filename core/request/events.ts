import type { InteractiveRequest } from '../domain/interactive-request.js';
import type { ClickOutcome } from '../ports/chat-transport.js';

/** Something that happens to an interactive request. `at` is epoch milliseconds: transitions have no clock. */
export type RequestEvent =
  | { type: 'click'; requestId: string; recipient: string; value: string; at: number }
  | {
      type: 'timeout';
      requestId: string;
      at: number;
      /**
       * Run by a status read past the deadline, not by the timeout's due item: its write then cancels
       * the item and pledges a refresh of the copies, as a click that finishes the request does.
       */
      byRead?: boolean;
    };

/** What must happen because of a transition. */
export type RequestCommand =
  /** Re-render and update every delivered copy for these recipients (normalized addresses). */
  | { type: 'update-messages'; recipients: string[] }
  /** Schedule the completion callback at `runAt` (written atomically with the transition). */
  | { type: 'enqueue-callback'; runAt: number }
  /** Drop the scheduled timeout (written atomically with the transition). */
  | { type: 'cancel-timeout' };

/** What a transition did with an event: the click outcomes, or `expired` for a timeout that finished the request. */
export type TransitionOutcome = ClickOutcome | 'expired';

/** The result of {@link transition}: `state` is the input itself when nothing changed. */
export interface TransitionResult {
  state: InteractiveRequest;
  commands: RequestCommand[];
  outcome: TransitionOutcome;
}

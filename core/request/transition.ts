import { isMatching } from 'ts-pattern';
import { type InteractiveRequest, nextVersion, type RecipientState } from '../domain/interactive-request.js';
import type { RequestCommand, RequestEvent, TransitionOutcome, TransitionResult } from './events.js';

const unchanged = (state: InteractiveRequest, outcome: TransitionOutcome): TransitionResult => ({
  state,
  commands: [],
  outcome,
});

/** The request finished at `at` with `recipients`; every copy changes, as its footer says it closed. */
function finish(
  state: InteractiveRequest,
  recipients: RecipientState[],
  at: number,
  outcome: TransitionOutcome,
): TransitionResult {
  const commands: RequestCommand[] = [
    { type: 'update-messages', recipients: recipients.map((r) => r.key) },
    { type: 'cancel-timeout' },
  ];
  if (state.callback) commands.push({ type: 'enqueue-callback', runAt: at });
  return { state: nextVersion(state, recipients, at), commands, outcome };
}

/** The timeout: every recipient without an answer expires; every copy loses its buttons. */
function expire(state: InteractiveRequest, at: number, outcome: TransitionOutcome): TransitionResult {
  const recipients = state.recipients.map((r) =>
    r.value === null
      ? { email: r.email, key: r.key, value: r.value, respondedAt: r.respondedAt, expired: true }
      : r,
  );
  return finish(state, recipients, at, outcome);
}

function click(state: InteractiveRequest, event: Extract<RequestEvent, { type: 'click' }>): TransitionResult {
  const index = state.recipients.findIndex((r) => r.key === event.recipient);
  const recipient = state.recipients[index];
  if (!recipient) return unchanged(state, 'not-found');
  if (!state.options.some((o) => o.value === event.value)) return unchanged(state, 'unknown-option');
  if (state.mode === 'onUserAction' && recipient.value !== null) return unchanged(state, 'final');
  // `onTimeout`: the last click counts. One made before the stored answer, whose write lost a race
  // to it (another instance), changes nothing: it was taken, and then replaced.
  if (recipient.respondedAt !== null && event.at < recipient.respondedAt) return unchanged(state, 'accepted');

  const recipients = state.recipients.with(index, {
    email: recipient.email,
    key: recipient.key,
    value: event.value,
    respondedAt: event.at,
    expired: recipient.expired,
  });
  if (state.mode === 'onUserAction' && recipients.every((r) => r.value !== null)) {
    return finish(state, recipients, event.at, 'accepted');
  }
  return {
    state: nextVersion(state, recipients, state.finishedAt),
    commands: [{ type: 'update-messages', recipients: [recipient.key] }],
    outcome: 'accepted',
  };
}

/**
 * The events' patterns as guards, built once: a transition runs for every click and every timeout,
 * and a `match(…).with(…)` chain builds a matcher object per call and per arm (about 2 KB an event).
 */
const isTimeout = isMatching({ type: 'timeout' } as const);
const isClick = isMatching({ type: 'click' } as const);

/** The error of an event no arm takes; `event` is `never` while every kind of event has its arm. */
function unknownEvent(event: never): never {
  throw new TypeError(`Unknown request event ${JSON.stringify(event)}`);
}

/**
 * The lifecycle of an interactive request (docs/behaviour.md#lifecycle, docs/behaviour.md#status-semantics) as a pure function: no clock, no
 * I/O. A finished request ignores everything. A click that arrives at or after the expiry finishes
 * the request as the timeout would, and is not counted.
 */
export function transition(state: InteractiveRequest, event: RequestEvent): TransitionResult {
  if (state.status === 'finished') return unchanged(state, 'finished');
  if (isTimeout(event)) return expire(state, event.at, 'expired');
  if (isClick(event)) {
    return event.at >= state.expiresAt ? expire(state, event.at, 'finished') : click(state, event);
  }
  return unknownEvent(event);
}

import type { CoreContext } from '../context.js';
import type { Principal, User } from '../domain/directory.js';
import type { InteractiveRequest } from '../domain/interactive-request.js';
import { isNotifyError, NotifyError } from '../errors.js';
import type { IdempotencyClaim } from '../ports/admission-store.js';
import type { IdempotencyAcquisition, IdempotencyScope, StoredResponse } from '../ports/idempotency-store.js';
import type { NotifyRequest } from '../schemas/notify-request.js';
import { fingerprint } from '../security/fingerprint.js';
import type { ResolvedRecipient } from './deliver-copies.js';
import { matchRecipients, recipientSpellings, resolveRecipients } from './resolve-recipients.js';
import { newSendId, sendNotification } from './send-notification.js';

/** Idempotency records live this long (docs/behaviour.md#idempotency). */
export const idempotencyTtlMs = 24 * 60 * 60 * 1000;
/** A running attempt holds its key this long; after that a repeat takes over (the process died). */
const leaseMs = 60_000;

/** An answer of the send endpoint, and whether it is a replay of a stored one. */
export interface SendResponse extends StoredResponse {
  replayed: boolean;
}

const answer = (status: number, body: unknown): StoredResponse => ({ status, body: JSON.stringify(body) });

/** `response` as answered now or replayed, built field by field (see `nextVersion` on spreads). */
const sendResponse = ({ status, body }: StoredResponse, replayed: boolean): SendResponse => ({
  status,
  body,
  replayed,
});

/** The claim of `key` for a send of `input`: what the admission acquires, or this use case itself. */
export const idempotencyClaim = (
  context: CoreContext,
  input: NotifyRequest,
  key: string,
): IdempotencyClaim => ({
  key,
  fingerprint: fingerprint(input),
  sendId: newSendId(context, input),
  timing: { now: context.clock.now(), leaseMs, ttlMs: idempotencyTtlMs },
});

/** What the caller learned of the send before it: the users of its recipients, its key's acquisition. */
export interface SendPreparation {
  /**
   * The users matching the normalized addresses of `input.user_emails`, when the admission looked
   * them up already (`admitSend`); looked up here otherwise.
   */
  found?: readonly User[];
  /**
   * The claim of the idempotency key made by the admission, and what acquiring it found; when the
   * store did not acquire it, it is acquired here with the same claim.
   */
  claimed?: { claim: IdempotencyClaim; acquisition?: IdempotencyAcquisition };
  /**
   * The interactive request the admission stored for this send (under the claim's send id when
   * there is a claim); stored here otherwise.
   */
  created?: InteractiveRequest;
}

/**
 * Sends once per idempotency key (docs/behaviour.md#idempotency): a repeat of a completed send replays its answer
 * byte for byte; a repeat while it runs is refused with 409; a repeat of a send that failed
 * resumes it, delivering only what was not delivered.
 */
export function sendIdempotently(
  context: CoreContext,
  principal: Principal,
  input: NotifyRequest,
  idempotencyKey: string | undefined,
  preparation: SendPreparation = {},
): Promise<SendResponse> {
  // Needs only the organization, so it runs alongside the idempotency lookup. A replay or a refusal
  // of the key drops it unread; an unknown address is answered (and stored as the key's 422) only
  // once the key is acquired, as when the lookup followed the acquisition.
  const { found, created } = preparation;
  const lookup =
    found === undefined ? resolveRecipients(context, principal.organization.id, input.user_emails) : null;
  lookup?.catch(() => undefined);
  // Users found already are matched when wanted, without a step of their own: an unknown address
  // throws there, in its turn.
  const recipients = (): Promise<ResolvedRecipient[]> | ResolvedRecipient[] =>
    lookup ?? matchRecipients(recipientSpellings(input.user_emails), found ?? []);
  if (idempotencyKey !== undefined) {
    return sendOnce(context, principal, input, idempotencyKey, preparation, recipients);
  }
  // Without a key, the send's answer is its own promise's, without a step of its own.
  const send = (resolved: ResolvedRecipient[]) =>
    sendNotification(context, principal, input, resolved, {
      sendId: created?.id ?? newSendId(context, input),
      resumed: false,
      resumable: false,
      ...(created === undefined ? {} : { created }),
    }).then((sent) => sendResponse(answer(200, sent), false));
  try {
    const resolved = recipients();
    return resolved instanceof Promise ? resolved.then(send) : send(resolved);
  } catch (error) {
    // An unknown address, as a rejection: the send's promise is its only answer.
    return Promise.reject(error);
  }
}

/**
 * Renews the lease of the key every third of it while its send runs, and answers the function that
 * stops: a send slowed by a platform (Slack's `Retry-After` for fifty recipients) keeps its key, so
 * that a repeat is refused with 409 instead of taking over and notifying everyone again. Only an
 * attempt whose process died lets its lease end.
 */
function keepLease(context: CoreContext, scope: IdempotencyScope, holder: string): () => void {
  const timer = setInterval(() => {
    // Through a promise: a store that throws rather than rejects must not take the process down
    // from a timer.
    Promise.resolve()
      .then(() => context.storage.idempotency.renew(scope, holder, { now: context.clock.now(), leaseMs }))
      .catch((error: unknown) =>
        context.logger.warn('could not renew the lease of an Idempotency-Key', {
          organizationId: scope.organizationId,
          error: String(error),
        }),
      );
  }, leaseMs / 3);
  // A renewal never keeps the process alive: a stopping process lets its leases end.
  timer.unref();
  return () => clearInterval(timer);
}

/** {@link sendIdempotently} with a key: acquired, then sent or replayed or refused. */
async function sendOnce(
  context: CoreContext,
  principal: Principal,
  input: NotifyRequest,
  idempotencyKey: string,
  { claimed, created }: SendPreparation,
  recipients: () => Promise<ResolvedRecipient[]> | ResolvedRecipient[],
): Promise<SendResponse> {
  const scope: IdempotencyScope = { organizationId: principal.organization.id, key: idempotencyKey };
  const store = context.storage.idempotency;
  const claim = claimed?.claim ?? idempotencyClaim(context, input, idempotencyKey);
  const { sendId } = claim;
  const acquired =
    claimed?.acquisition ?? (await store.acquire(scope, claim.fingerprint, sendId, claim.timing));
  switch (acquired.outcome) {
    case 'completed':
      return sendResponse(acquired.response, true);
    case 'busy':
      throw new NotifyError('conflict', 'A request with this Idempotency-Key is still being processed', {
        retryAfterSeconds: 1,
      });
    case 'mismatch':
      throw new NotifyError(
        'unprocessable',
        'This Idempotency-Key was already used with a different request body',
      );
    case 'acquired':
      break;
  }
  let response: StoredResponse;
  // The attempt holds the key under the send id it proposed, whatever id it sends under.
  const stopRenewing = keepLease(context, scope, sendId);
  try {
    const resolved = recipients();
    response = answer(
      200,
      await sendNotification(
        context,
        principal,
        input,
        resolved instanceof Promise ? await resolved : resolved,
        {
          sendId: acquired.sendId,
          // The store answers the proposed id unless an earlier attempt of the key holds another.
          resumed: acquired.sendId !== sendId,
          resumable: true,
          ...(created?.id === acquired.sendId ? { created } : {}),
        },
      ),
    );
  } catch (error) {
    if (!isNotifyError(error, 'unprocessable')) {
      await store.fail(scope, sendId).catch(() => undefined);
      throw error;
    }
    response = answer(422, { status: 'error', details: error.details });
  } finally {
    stopRenewing();
  }
  // Awaited: a client may repeat the moment it has the answer, and a write merely issued first need
  // not land first (a Redis that lost its scripts runs it a round trip late; MongoDB spreads calls
  // over a pool of connections), so the repeat would find the key still running and get a 409.
  // Should it fail, the answer still goes out: the key stays running until its lease ends, and the
  // next repeat resumes the send, finds every copy delivered and answers what this answer says.
  await store.complete(scope, sendId, response).catch((error: unknown) => {
    context.logger.warn('could not store the answer of an Idempotency-Key; a repeat resumes the send', {
      organizationId: scope.organizationId,
      error: String(error),
    });
  });
  return sendResponse(response, false);
}

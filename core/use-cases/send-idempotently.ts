import type { CoreContext } from '../context.js';
import type { Principal, User } from '../domain/directory.js';
import { isNotifyError, NotifyError } from '../errors.js';
import type { IdempotencyScope, StoredResponse } from '../ports/idempotency-store.js';
import type { NotifyRequest } from '../schemas/notify-request.js';
import { fingerprint } from '../security/fingerprint.js';
import { matchRecipients, recipientSpellings, resolveRecipients } from './resolve-recipients.js';
import { newSendId, sendNotification } from './send-notification.js';

/** Idempotency records live this long (docs/behaviour.md#idempotency). */
const ttlMs = 24 * 60 * 60 * 1000;
/** A running attempt holds its key this long; after that a repeat takes over (the process died). */
const leaseMs = 60_000;

/** An answer of the send endpoint, and whether it is a replay of a stored one. */
export interface SendResponse extends StoredResponse {
  replayed: boolean;
}

const answer = (status: number, body: unknown): StoredResponse => ({ status, body: JSON.stringify(body) });

/**
 * Sends once per idempotency key (docs/behaviour.md#idempotency): a repeat of a completed send replays its answer
 * byte for byte; a repeat while it runs is refused with 409; a repeat of a send that failed
 * resumes it, delivering only what was not delivered.
 *
 * @param found the users matching the normalized addresses of `input.user_emails`, when the
 *   admission looked them up already (`admitSend`); looked up here otherwise.
 */
export async function sendIdempotently(
  context: CoreContext,
  principal: Principal,
  input: NotifyRequest,
  idempotencyKey: string | undefined,
  found?: readonly User[],
): Promise<SendResponse> {
  // Needs only the organization, so it runs alongside the idempotency lookup. A replay or a refusal
  // of the key drops it unread; an unknown address is answered (and stored as the key's 422) only
  // once the key is acquired, as when the lookup followed the acquisition.
  const recipients =
    found === undefined
      ? resolveRecipients(context, principal.organization.id, input.user_emails)
      : Promise.resolve().then(() => matchRecipients(recipientSpellings(input.user_emails), found));
  recipients.catch(() => undefined);
  const sendId = newSendId(context, input);
  if (idempotencyKey === undefined) {
    const sent = await sendNotification(context, principal, input, await recipients, {
      sendId,
      resumed: false,
    });
    return { ...answer(200, sent), replayed: false };
  }
  const scope: IdempotencyScope = { organizationId: principal.organization.id, key: idempotencyKey };
  const store = context.storage.idempotency;
  const acquired = await store.acquire(scope, fingerprint(input), sendId, {
    now: context.clock.now(),
    leaseMs,
    ttlMs,
  });
  switch (acquired.outcome) {
    case 'completed':
      return { ...acquired.response, replayed: true };
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
  try {
    response = answer(
      200,
      await sendNotification(context, principal, input, await recipients, {
        sendId: acquired.sendId,
        // The store answers the proposed id unless an earlier attempt of the key holds another.
        resumed: acquired.sendId !== sendId,
      }),
    );
  } catch (error) {
    if (!isNotifyError(error, 'unprocessable')) {
      await store.fail(scope).catch(() => undefined);
      throw error;
    }
    response = answer(422, { status: 'error', details: error.details });
  }
  await store.complete(scope, response);
  return { ...response, replayed: false };
}

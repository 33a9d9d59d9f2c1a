import { keptWithRequest } from '../callbacks/request-retention.js';
import type { CoreContext } from '../context.js';
import type { Principal } from '../domain/directory.js';
import { timeoutItemId } from '../domain/due-work.js';
import { type InteractiveRequest, timeoutEnd } from '../domain/interactive-request.js';
import { NotifyError } from '../errors.js';
import { admittedRequest, type RequestToCreate } from '../ports/admission-store.js';
import type { DueWorkChanges } from '../ports/request-store.js';
import { plainView, requestViews } from '../request/message-view.js';
import type { NotifyRequest } from '../schemas/notify-request.js';
import type { NotificationSent, RequestCreated } from '../schemas/responses.js';
import { generateCallbackSecret } from '../security/callback-secret.js';
import {
  type DeliveredCopies,
  deliverCopies,
  type ResolvedRecipient,
  updateCopies,
} from './deliver-copies.js';
import { refreshLeftBehind } from './refresh-copies.js';
import { requestToResume, withdrawRequest } from './withdraw-request.js';

/** The id a send goes out under, and whether an earlier, unfinished attempt already used it. */
export interface SendAttempt {
  /** `notification_id` of a plain send, `request_id` of an interactive one. */
  sendId: string;
  /** True when the send resumes an earlier attempt with the same idempotency key. */
  resumed: boolean;
  /**
   * True when a later attempt may resume this send (it has an idempotency key): a plain send then
   * records its copies, so that the later attempt delivers only the others. An interactive send
   * records them whatever this says: its updates find them there.
   */
  resumable: boolean;
  /** The interactive request under `sendId`, when the admission stored it already (`admitSend`). */
  created?: InteractiveRequest;
}

/** A fresh id for a send of `input`: a request id when it is interactive, a notification id otherwise. */
export const newSendId = (context: CoreContext, input: NotifyRequest): string =>
  input.response_request ? context.ids.requestId() : context.ids.notificationId();

/**
 * The send use case (docs/http-api.md#post-apinotify) to resolved recipients: store the request,
 * deliver every copy. Hands on the promise of the kind of send, without one of its own.
 */
export function sendNotification(
  context: CoreContext,
  principal: Principal,
  input: NotifyRequest,
  recipients: ResolvedRecipient[],
  attempt: SendAttempt,
): Promise<NotificationSent | RequestCreated> {
  return input.response_request
    ? sendInteractive(context, principal, input, recipients, attempt)
    : sendPlain(context, principal, input.message, recipients, attempt);
}

/** A plain send: its copies delivered, as one step that answers once they are. */
function sendPlain(
  context: CoreContext,
  principal: Principal,
  message: string,
  recipients: ResolvedRecipient[],
  attempt: SendAttempt,
): Promise<NotificationSent> {
  const { sendId, resumed, resumable } = attempt;
  const view = plainView(sendId, message);
  return deliverCopies(
    context,
    {
      organization: principal.organization,
      sendId,
      resumed,
      recorded: resumable,
      ttlMs: context.retentionMs,
    },
    recipients,
    () => view,
  ).then((copies) => {
    throwIfFailed(copies);
    return { status: 'ok', notification_id: sendId };
  });
}

async function sendInteractive(
  context: CoreContext,
  principal: Principal,
  input: NotifyRequest,
  recipients: ResolvedRecipient[],
  attempt: SendAttempt,
): Promise<RequestCreated> {
  // An earlier attempt may have stopped before storing the request.
  const stored = attempt.resumed ? await requestToResume(context, attempt.sendId, timeoutDue) : null;
  const request =
    stored ??
    attempt.created ??
    admittedRequest(requestDraft(context, input, recipients, attempt.sendId), principal);
  if (!stored) {
    if (!attempt.created) await context.storage.requests.createRequest(request, timeoutDue(request));
    context.dueWork.poke();
  }
  const copies = await deliverCopies(
    context,
    {
      organization: principal.organization,
      sendId: request.id,
      resumed: stored !== null,
      recorded: true,
      // A retry after the request finished adds copies to deliveries that already expire, with it.
      ...keptWithRequest(context, request),
    },
    recipients,
    requestViews(request),
  );
  // Each recording of a copy answered the request's version as it stood once the copy was on
  // record: a click stored before then shows there, and one stored after it finds every copy on
  // record and updates them itself. An earlier attempt may have stopped before its own check, so
  // what its copies show is not known: a resumed send brings every copy up to date.
  if (stored !== null) await refreshCopies(context, request.id, null);
  else if (copies.requestVersions.some((version) => version !== request.version)) {
    await refreshCopies(context, request.id, request.version);
  }
  // Nothing went out, and no repeat can send it while a recipient is on no platform: the request
  // does not wait for its timeout (a repeat that can stores it again).
  if (copies.withheld) await withdrawRequest(context, request);
  throwIfFailed(copies);
  return {
    status: 'ok',
    request_id: request.id,
    ...(request.callback ? { callback_secret: request.callback.secret } : {}),
  };
}

/** An interactive request as a send of `input` stores it, but for its organization and sender. */
export function requestDraft(
  context: CoreContext,
  input: NotifyRequest,
  recipients: readonly Pick<ResolvedRecipient, 'key' | 'email'>[],
  id: string,
): RequestToCreate['request'] {
  const responseRequest = input.response_request;
  if (!responseRequest) throw new TypeError('an interactive request needs response_request');
  const now = context.clock.now();
  return {
    id,
    version: 0,
    status: 'pending',
    message: input.message,
    options: responseRequest.options,
    mode: responseRequest.disable,
    timeoutMinutes: responseRequest.timeout_minutes,
    createdAt: now,
    expiresAt: timeoutEnd(now, responseRequest.timeout_minutes),
    finishedAt: null,
    externalReferenceId: input.external_reference_id ?? null,
    callback: responseRequest.callback_url
      ? { url: responseRequest.callback_url, secret: generateCallbackSecret() }
      : null,
    recipients: recipients.map(({ key, email }) => ({
      key,
      email,
      value: null,
      respondedAt: null,
      expired: false,
    })),
  };
}

/** The due work stored with a new request: its timeout. */
export const timeoutDue = (request: Pick<InteractiveRequest, 'id' | 'expiresAt'>): DueWorkChanges => ({
  enqueue: [
    {
      id: timeoutItemId(request.id),
      kind: 'timeout',
      requestId: request.id,
      runAt: request.expiresAt,
      attempt: 0,
    },
  ],
  cancel: [],
});

/**
 * Brings every copy of a request to the view of its latest state (a copy already showing it changes
 * nothing; one that fails is refreshed later), unless that state is still `knownVersion`: a click
 * on a copy delivered early may have changed the request while later copies were still going out
 * with the first view. Null when what the copies show is not known.
 */
async function refreshCopies(
  context: CoreContext,
  requestId: string,
  knownVersion: number | null,
): Promise<void> {
  // Every copy is delivered and on record: a store that cannot read the request, its copies or
  // take the refresh now must not turn the send into an error, which a caller without an
  // Idempotency-Key would answer by sending again. The copies are left to a refresh.
  let failed: number;
  try {
    const latest = await context.storage.requests.getRequest(requestId);
    if (!latest || latest.version === knownVersion) return;
    failed = await updateCopies(
      context,
      latest.organizationId,
      latest.id,
      latest.recipients.map((r) => r.key),
      requestViews(latest),
    );
  } catch (error) {
    context.logger.warn('could not bring the copies of a send up to date; left to a refresh', {
      requestId,
      error: String(error),
    });
    failed = 1;
  }
  await refreshLeftBehind(context, requestId, failed);
}

function throwIfFailed({ unreached, withheld }: DeliveredCopies): void {
  if (unreached.length === 0) return;
  const named = `Delivery failed for: ${unreached.map((recipient) => recipient.email).join(', ')}`;
  throw new NotifyError(
    'delivery_failed',
    withheld ? `${named} (no chat platform reaches them; nothing was sent to anyone)` : named,
  );
}

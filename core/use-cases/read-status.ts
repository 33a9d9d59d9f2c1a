import type { CoreContext } from '../context.js';
import type { Principal } from '../domain/directory.js';
import type { InteractiveRequest } from '../domain/interactive-request.js';
import { NotifyError } from '../errors.js';

/** Request ids as the service issues them (docs/behaviour.md#identifiers). */
export const requestIdPattern = /^req_[A-Za-z0-9]{24}$/;

/**
 * The status use case (docs/http-api.md#get-apinotifystatusrequest_id) once the request was read:
 * null when none is stored under `requestId`. Answers the request as the status shows it
 * (`statusBody`, `statusJson`), at once, or once stored finished when it was read past its expiry
 * with its timeout not run yet: the read runs the timeout itself. Showing the state the timeout
 * would leave, unstored, let a click made before the deadline whose write came after the read change
 * a request already shown finished, and its callback then told other answers than the status had.
 *
 * @throws NotifyError `invalid_request` for a malformed id, `not_found` for a request that is not
 * stored or is another organization's.
 */
export function shownRequest(
  context: CoreContext,
  principal: Principal,
  requestId: string,
  request: InteractiveRequest | null,
): InteractiveRequest | Promise<InteractiveRequest> {
  if (!requestIdPattern.test(requestId))
    throw new NotifyError('invalid_request', 'Invalid request_id format');
  if (!request || request.organizationId !== principal.organization.id) {
    throw new NotifyError('not_found', 'Request not found');
  }
  if (request.status === 'pending' && context.clock.now() >= request.expiresAt)
    return timedOut(context, request);
  return request;
}

/**
 * Runs the timeout of a request read past its expiry, and answers the request as stored then. Any
 * failure is the read's, a notifier that is stopping included (a retryable `unavailable`, as its
 * clicks get): answering the state the timeout would leave, unstored, would let a click made before
 * the deadline whose write is still under way on another instance change what the reader saw
 * finished.
 */
async function timedOut(context: CoreContext, read: InteractiveRequest): Promise<InteractiveRequest> {
  const { request } = await context.machine.dispatch(
    { type: 'timeout', requestId: read.id, at: context.clock.now(), byRead: true },
    'stored',
  );
  if (request === null) throw new NotifyError('not_found', 'Request not found');
  return request;
}

/** {@link shownRequest} of the request `requestId`, read here; a malformed id is never read. */
export async function readStatus(
  context: CoreContext,
  principal: Principal,
  requestId: string,
): Promise<InteractiveRequest> {
  const request = requestIdPattern.test(requestId)
    ? await context.storage.requests.getRequest(requestId)
    : null;
  return shownRequest(context, principal, requestId, request);
}

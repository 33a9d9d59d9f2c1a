import type { CoreContext } from '../context.js';
import type { Principal } from '../domain/directory.js';
import type { InteractiveRequest } from '../domain/interactive-request.js';
import { NotifyError } from '../errors.js';
import { transition } from '../request/transition.js';

/** Request ids as the service issues them (docs/behaviour.md#identifiers). */
export const requestIdPattern = /^req_[A-Za-z0-9]{24}$/;

/**
 * The status use case (docs/http-api.md#get-apinotifystatusrequest_id) once the request was read:
 * null when none is stored under `requestId`. A request past its expiry whose timeout has not run
 * yet is shown as the timeout will leave it, so that a reader never sees a request pending after its
 * deadline; the due-work runner is nudged to store that state. Answers the request as the status
 * shows it (`statusBody`, `statusJson`).
 *
 * @throws NotifyError `invalid_request` for a malformed id, `not_found` for a request that is not
 * stored or is another organization's.
 */
export function shownRequest(
  context: CoreContext,
  principal: Principal,
  requestId: string,
  request: InteractiveRequest | null,
): InteractiveRequest {
  if (!requestIdPattern.test(requestId))
    throw new NotifyError('invalid_request', 'Invalid request_id format');
  if (!request || request.organizationId !== principal.organization.id) {
    throw new NotifyError('not_found', 'Request not found');
  }
  if (request.status === 'pending' && context.clock.now() >= request.expiresAt) {
    context.dueWork.poke();
    return transition(request, { type: 'timeout', requestId, at: request.expiresAt }).state;
  }
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

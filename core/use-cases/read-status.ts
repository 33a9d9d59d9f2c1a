import type { CoreContext } from '../context.js';
import type { Principal } from '../domain/directory.js';
import type { InteractiveRequest } from '../domain/interactive-request.js';
import { NotifyError } from '../errors.js';
import { transition } from '../request/transition.js';

/** Request ids as the service issues them (docs/behaviour.md#identifiers). */
export const requestIdPattern = /^req_[A-Za-z0-9]{24}$/;

/**
 * The status use case (docs/http-api.md#get-apinotifystatusrequest_id). A request past its expiry whose timeout has not run yet is shown
 * as the timeout will leave it, so that a reader never sees a request pending after its deadline;
 * the due-work runner is nudged to store that state. Answers the request as the status shows it
 * (`statusBody`, `statusJson`).
 *
 * @param stored the read of the request, when the caller started it already; read here otherwise.
 */
export async function readStatus(
  context: CoreContext,
  principal: Principal,
  requestId: string,
  stored?: Promise<InteractiveRequest | null>,
): Promise<InteractiveRequest> {
  if (!requestIdPattern.test(requestId))
    throw new NotifyError('invalid_request', 'Invalid request_id format');
  const request = await (stored ?? context.storage.requests.getRequest(requestId));
  if (!request || request.organizationId !== principal.organization.id) {
    throw new NotifyError('not_found', 'Request not found');
  }
  if (request.status === 'pending' && context.clock.now() >= request.expiresAt) {
    context.dueWork.poke();
    return transition(request, { type: 'timeout', requestId, at: request.expiresAt }).state;
  }
  return request;
}

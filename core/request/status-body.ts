import type { InteractiveRequest } from '../domain/interactive-request.js';
import type { RecipientResponse, RequestStatus } from '../schemas/responses.js';

/** The `responses` entries of a request (docs/http-api.md#response-200), in recipient order. */
export function responseEntries(request: InteractiveRequest): RecipientResponse[] {
  return request.recipients.map((r) => ({
    user_email: r.email,
    option_value: r.value,
    timestamp: r.respondedAt === null ? null : new Date(r.respondedAt).toISOString(),
    expired: r.expired,
  }));
}

/** The status answer of a request (docs/http-api.md#response-200). */
export function statusBody(request: InteractiveRequest): RequestStatus {
  return {
    status: request.status,
    ...(request.externalReferenceId === null ? {} : { external_reference_id: request.externalReferenceId }),
    responses: responseEntries(request),
  };
}

import type { InteractiveRequest } from '../domain/interactive-request.js';
import { responseEntries } from '../request/status-body.js';
import type { CallbackBody } from '../schemas/callback.js';

/** The callback body of a finished request; the same bytes on every attempt. */
export function callbackBody(request: InteractiveRequest): CallbackBody {
  return {
    type: 'request.finished',
    request_id: request.id,
    status: 'finished',
    ...(request.externalReferenceId === null ? {} : { external_reference_id: request.externalReferenceId }),
    responses: responseEntries(request),
    finished_at: new Date(request.finishedAt ?? request.expiresAt).toISOString(),
  };
}

/** `webhook-id` of a request's completion: stable across attempts, so receivers can deduplicate. */
export const webhookId = (requestId: string): string => `msg_${requestId.slice('req_'.length)}`;

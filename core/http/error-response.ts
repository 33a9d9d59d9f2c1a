import { isNotifyError, type NotifyErrorCode } from '../errors.js';
import type { Logger } from '../ports/logger.js';
import { IncompleteBodyError } from './read-body.js';
import { errorResponse } from './responses.js';
import type { HttpResponse } from './types.js';

const statusOf: Record<NotifyErrorCode, number> = {
  invalid_request: 400,
  unauthenticated: 401,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unprocessable: 422,
  rate_limited: 429,
  delivery_failed: 500,
  internal: 500,
  unavailable: 503,
};

/**
 * The challenge of a `401` (RFC 9110 §11.6.1 requires one): the API key scheme, which no registry
 * names, and the header that carries the key.
 */
export const apiKeyChallenge = 'ApiKey header="X-API-Key"';

/**
 * Any thrown value as an answer in the specification's error shape. Unexpected errors become a
 * generic 500 whose cause goes to the log only. A client that went away mid-upload is routine: one
 * debug line, no stack, and a 400 that nobody reads.
 */
export function toErrorResponse(error: unknown, logger: Logger): HttpResponse {
  if (error instanceof IncompleteBodyError) {
    logger.debug('client disconnected before the request body was complete', { reason: error.reason });
    return errorResponse(400, 'Request body was not received completely');
  }
  // A code this copy does not know (an error of a newer copy of the library) is an unexpected one.
  if (isNotifyError(error) && error.code !== 'internal' && Object.hasOwn(statusOf, error.code)) {
    const retryAfter = error.retryAfterSeconds ?? (error.code === 'unavailable' ? 1 : undefined);
    if (error.code === 'unavailable')
      logger.warn('storage unavailable', { cause: String(error.cause ?? error) });
    return errorResponse(statusOf[error.code], error.details, {
      ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }),
      ...(error.code === 'unauthenticated' ? { 'www-authenticate': apiKeyChallenge } : {}),
    });
  }
  logger.error('unexpected error', {
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  return errorResponse(500, 'Internal server error');
}

import { errorResponse } from '../../core/http/responses.js';
import type { HttpResponse } from '../../core/http/types.js';

/**
 * The answer when a body parser ran before the router: platform signatures are over the raw
 * bytes, so the router must see them. Failing loudly beats verifying a re-serialized body.
 */
export const consumedBodyResponse = (): HttpResponse =>
  errorResponse(
    500,
    'chat-notify must be mounted before any body parser: the raw request body was already consumed',
  );

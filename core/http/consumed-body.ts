import { errorResponse } from './responses.js';
import type { HttpResponse } from './types.js';

/**
 * The answer when a body parser ran before the router, on a path the library serves: platform
 * signatures are over the raw bytes, so the router must see them. Failing loudly beats verifying a
 * re-serialized body.
 */
export const consumedBodyResponse = (): HttpResponse =>
  errorResponse(
    500,
    'chat-notify must be mounted before any body parser: the raw request body was already consumed',
  );

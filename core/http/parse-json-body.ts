import { NotifyError } from '../errors.js';
import { isJsonMediaType } from './json-media-type.js';
import type { HttpRequest } from './types.js';

const decoder = new TextDecoder('utf-8', { fatal: true });

/** The body as a JSON object, or a 400 that says why it is not one. */
export function parseJsonObject(request: HttpRequest): Record<string, unknown> {
  if (!isJsonMediaType(request.headers['content-type'])) {
    throw new NotifyError('invalid_request', 'Content-Type must be application/json');
  }
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(request.body));
  } catch {
    throw new NotifyError('invalid_request', 'Request body could not be parsed as JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new NotifyError('invalid_request', 'Request body could not be parsed: it must be a JSON object');
  }
  return value as Record<string, unknown>;
}

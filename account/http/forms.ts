import { isJsonMediaType } from '../../core/adapter-kit.js';
import { NotifyError } from '../../core/index.js';

/** The fields of an `application/x-www-form-urlencoded` body (what a page's form posts). */
export function formFields(body: Uint8Array): URLSearchParams {
  return new URLSearchParams(new TextDecoder().decode(body));
}

/**
 * A JSON body as an object.
 * @throws NotifyError `invalid_request` when the body is not `application/json` or not a JSON object.
 */
export function jsonObject(contentType: string | undefined, body: Uint8Array): Record<string, unknown> {
  if (!isJsonMediaType(contentType)) {
    throw new NotifyError('invalid_request', 'Content-Type must be application/json');
  }
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw new NotifyError('invalid_request', 'Request body could not be parsed as JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new NotifyError('invalid_request', 'Request body could not be parsed: it must be a JSON object');
  }
  return value as Record<string, unknown>;
}

import type { RecipientResponse } from './responses.js';

/** The body of a completion callback, as the service sends it and a receiver reads it. */
export interface CallbackBody {
  type: 'request.finished';
  request_id: string;
  status: 'finished';
  /** Present when the request was sent with one. */
  external_reference_id?: string;
  /** One entry per recipient, as in the status body. */
  responses: RecipientResponse[];
  /** When the request finished: ISO 8601, UTC, milliseconds. */
  finished_at: string;
}

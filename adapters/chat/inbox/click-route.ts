import {
  type ClickOutcome,
  errorResponse,
  type HttpResponse,
  isJsonMediaType,
  jsonResponse,
} from '../../../core/adapter-kit.js';
import { parseClickBody } from './click-body.js';
import type { ConnectedHandler } from './route-context.js';

/** The answer for each outcome of the sink. */
const outcomeResponses: Record<ClickOutcome, () => HttpResponse> = {
  accepted: () => jsonResponse(200, { status: 'ok' }),
  final: () => errorResponse(409, 'The choice for this message is already final'),
  finished: () => errorResponse(409, 'The request of this message has finished'),
  'unknown-option': () => errorResponse(400, 'value: is not an option of this message'),
  'not-found': () => errorResponse(404, 'Request not found'),
};

/**
 * `POST /inbox/api/messages/:id/click` with `{"value":…}`. The click goes to the sink exactly as a
 * Slack or Teams click does, so the inbox exercises the same path through the core.
 */
export const handleClick: ConnectedHandler = async ({ messages, sink }, request, params) => {
  if (!isJsonMediaType(request.headers['content-type'])) {
    return errorResponse(400, 'Content-Type must be application/json');
  }
  const parsed = parseClickBody(request.body);
  if (!parsed.ok) return errorResponse(400, parsed.details);

  const id = params.id;
  const message = id === undefined ? null : await messages.get(id);
  if (message === null) return errorResponse(404, 'Message not found');
  if (message.requestId === null || message.buttons.length === 0) {
    return errorResponse(404, 'This message has no buttons');
  }
  if (!message.buttonsEnabled) return errorResponse(409, 'The buttons of this message are disabled');

  const outcome = await sink.click({
    requestId: message.requestId,
    recipient: message.recipient,
    value: parsed.body.value,
  });
  return outcomeResponses[outcome]();
};

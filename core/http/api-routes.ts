import type { CoreContext } from '../context.js';
import { NotifyError } from '../errors.js';
import { statusJson } from '../request/status-body.js';
import { formatIssues } from '../schemas/format-issues.js';
import { idempotencyKeyPattern } from '../schemas/idempotency-key.js';
import { notifyRequestSchema } from '../schemas/notify-request.js';
import { admitSend } from '../use-cases/admit-send.js';
import { admitWithExtras } from '../use-cases/authenticate.js';
import { checkCallbackOfSend } from '../use-cases/check-callback-url.js';
import { requestIdPattern, shownRequest } from '../use-cases/read-status.js';
import { sendIdempotently } from '../use-cases/send-idempotently.js';
import { openApiJson } from './openapi.js';
import { parseJsonObject } from './parse-json-body.js';
import { jsonTextResponse } from './responses.js';
import type { Route } from './types.js';

/** The header of an answer replayed from its `Idempotency-Key`. */
const replayedHeader = { 'idempotent-replayed': 'true' } as const;

/** Marks a promise's rejection as seen, made once rather than per status read. */
const ignored = (): undefined => undefined;

/** The specification's endpoints (docs/http-api.md), and the OpenAPI document that describes them. */
export function apiRoutes(context: CoreContext): Route[] {
  return [
    {
      method: 'POST',
      path: '/api/notify',
      async handle(request) {
        // The admission looks the recipients up, acquires a well-formed Idempotency-Key and stores an
        // interactive request (unless the key is malformed, or a callback address comes to a service
        // without callbacks) in its own storage step; the errors of the body, the callback address
        // (whose refusal withdraws the request and keeps its 422 under the key) and the key are still answered
        // after the admission's, in their order (docs/behaviour.md#order-of-checks).
        const idempotencyKey = request.headers['idempotency-key'];
        const wellFormedKey =
          idempotencyKey !== undefined && idempotencyKeyPattern.test(idempotencyKey)
            ? idempotencyKey
            : undefined;
        const { principal, input, users, claimed, created } = await admitSend(
          context,
          request.headers['x-api-key'],
          request.clientAddress,
          () => {
            const parsed = notifyRequestSchema.safeParse(parseJsonObject(request));
            if (!parsed.success) throw new NotifyError('invalid_request', formatIssues(parsed.error.issues));
            return parsed.data;
          },
          { idempotencyKey: wellFormedKey, mayStore: idempotencyKey === wellFormedKey },
        );
        // The key's format is checked before the address of the callback: a send with a malformed
        // key is refused whatever DNS says (its request was not stored, nor its key acquired).
        if (idempotencyKey !== undefined && wellFormedKey === undefined) {
          throw new NotifyError(
            'invalid_request',
            'Idempotency-Key: must be 1 to 255 printable ASCII characters, without spaces at either end',
          );
        }
        const callbackUrl = input.response_request?.callback_url;
        // The address is looked up for a send that is to run: a repeat of a completed one replays
        // its answer whatever DNS says now, and one that is running or mismatched is refused anyway.
        const acquisition = claimed?.acquisition;
        if (callbackUrl !== undefined && (acquisition === undefined || acquisition.outcome === 'acquired')) {
          await checkCallbackOfSend(context, callbackUrl, principal, { created, claimed });
        }
        const response = await sendIdempotently(context, principal, input, wellFormedKey, {
          found: users,
          claimed,
          created,
        });
        return jsonTextResponse(
          response.status,
          response.body,
          response.replayed ? replayedHeader : undefined,
        );
      },
    },
    {
      method: 'GET',
      path: '/api/notify/status/:requestId',
      async handle(request, params) {
        const requestId = params.requestId ?? '';
        // Read alongside the admission, so that a status costs one round trip; a refused caller's
        // read is dropped unseen, and a malformed id is still refused only after the admission.
        const stored = requestIdPattern.test(requestId)
          ? context.storage.requests.getRequest(requestId)
          : null;
        stored?.catch(ignored);
        const { principal } = await admitWithExtras(
          context,
          request.headers['x-api-key'],
          request.clientAddress,
        );
        const read = stored === null ? null : await stored;
        const shown = shownRequest(context, principal, requestId, read);
        return jsonTextResponse(200, statusJson(shown instanceof Promise ? await shown : shown));
      },
    },
    {
      method: 'GET',
      path: '/openapi.json',
      handle: async (request) => jsonTextResponse(200, openApiJson(request.mountPath)),
    },
  ];
}

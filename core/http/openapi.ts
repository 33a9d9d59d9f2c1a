import { z } from 'zod';
import { idempotencyKeyPattern } from '../schemas/idempotency-key.js';
import { notifyRequestSchema, optionSchema, responseRequestSchema } from '../schemas/notify-request.js';
import {
  errorBodySchema,
  notificationSentSchema,
  recipientResponseSchema,
  requestCreatedSchema,
  requestStatusSchema,
} from '../schemas/responses.js';
import { apiKeyChallenge } from './error-response.js';

type JsonSchema = Record<string, unknown>;

/**
 * The request and response bodies as OpenAPI components.
 * Request shapes are described as callers write them (`io: 'input'`: defaults make fields optional).
 */
function components(): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  const named = {
    NotifyRequest: notifyRequestSchema,
    ResponseRequest: responseRequestSchema,
    Option: optionSchema,
    NotificationSent: notificationSentSchema,
    RequestCreated: requestCreatedSchema,
    RequestStatus: requestStatusSchema,
    RecipientResponse: recipientResponseSchema,
    Error: errorBodySchema,
  };
  for (const [id, schema] of Object.entries(named)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    io: 'input',
    target: 'draft-2020-12',
    uri: (id) => `#/components/schemas/${id}`,
  });
  const cleaned: Record<string, JsonSchema> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _dialect, $id: _id, ...rest } = schema as JsonSchema;
    cleaned[id] = rest;
  }
  return cleaned;
}

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
const json = (id: string) => ({ content: { 'application/json': { schema: ref(id) } } });
const error = (description: string) => ({ description, ...json('Error') });
const retryAfter = {
  'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait before retrying' },
};
const unauthenticated = {
  ...error('Missing or invalid API key'),
  headers: {
    'WWW-Authenticate': {
      schema: { type: 'string', enum: [apiKeyChallenge] },
      description: 'The scheme of the API key and the header that carries it',
    },
  },
};
const replayed = {
  'Idempotent-Replayed': {
    schema: { type: 'string', enum: ['true'] },
    description: 'Present when the answer is the stored one of an earlier send with this Idempotency-Key',
  },
};
/** Said of every path: what an operation cannot declare, the answer to a method it does not serve. */
const otherMethods =
  'A GET is also served as HEAD: the same status and headers, without a body. Any other method is answered 405 with an Allow header listing those served, in the Error shape.';

let cached: JsonSchema | null = null;

/** The OpenAPI 3.1 document of the API, generated from the same zod schemas that validate requests. */
export function openApiDocument(): JsonSchema {
  cached ??= {
    openapi: '3.1.0',
    info: {
      title: 'chat-notify',
      version: '1.0.0',
      description:
        'Send plain and interactive notifications to the people of an organization through team chat.',
    },
    components: {
      schemas: components(),
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
    },
    security: [{ apiKey: [] }],
    paths: {
      '/api/notify': {
        description: otherMethods,
        post: {
          operationId: 'sendNotification',
          summary: 'Send a notification, interactive when response_request is present',
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              description: 'Makes retries of one send safe: repeats within 24 hours replay its answer',
              schema: { type: 'string', pattern: idempotencyKeyPattern.source },
            },
          ],
          requestBody: { required: true, ...json('NotifyRequest') },
          responses: {
            '200': {
              description: 'Accepted and delivered',
              headers: replayed,
              content: {
                'application/json': { schema: { oneOf: [ref('NotificationSent'), ref('RequestCreated')] } },
              },
            },
            '400': error(
              'Invalid body, or a malformed header (Content-Type, Idempotency-Key, one given twice)',
            ),
            '401': unauthenticated,
            '409': { ...error('The same Idempotency-Key is still being processed'), headers: retryAfter },
            '413': error('Body larger than 64 KiB'),
            '422': {
              ...error(
                'Unknown recipients, a callback_url refused, or an Idempotency-Key reused with another body',
              ),
              headers: replayed,
            },
            '429': { ...error('Rate limit exceeded'), headers: retryAfter },
            '500': error('Delivery failed, or an unexpected failure'),
            '503': { ...error('Storage temporarily unavailable'), headers: retryAfter },
          },
        },
      },
      '/api/notify/status/{request_id}': {
        description: otherMethods,
        get: {
          operationId: 'getRequestStatus',
          summary: 'Status of an interactive request',
          parameters: [
            {
              name: 'request_id',
              in: 'path',
              required: true,
              schema: { type: 'string', pattern: '^req_[A-Za-z0-9]{24}$' },
            },
          ],
          responses: {
            '200': { description: 'The status', ...json('RequestStatus') },
            '400': error('Invalid request_id format'),
            '401': unauthenticated,
            '404': error('Request not found'),
            '413': error('A body (never used) larger than 64 KiB'),
            '429': { ...error('Rate limit exceeded'), headers: retryAfter },
            '500': error('An unexpected failure'),
            '503': { ...error('Storage temporarily unavailable'), headers: retryAfter },
          },
        },
      },
    },
  };
  return cached;
}

let documentJson: string | undefined;

/**
 * The document as served under `mountPath` (`/notifications`, or '' at the root), whose `servers`
 * names that path so that a tool reading it calls the API where it is mounted. The rest is made at
 * the first read and kept (`/openapi.json` needs no key, and a flood of reads must not build a 6 KB
 * document for each); the server is added to it as text, since a mount path may come in any case.
 */
export function openApiJson(mountPath = ''): string {
  documentJson ??= JSON.stringify(openApiDocument());
  const servers = JSON.stringify([{ url: mountPath === '' ? '/' : mountPath }]);
  return `${documentJson.slice(0, -1)},"servers":${servers}}`;
}

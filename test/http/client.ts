import { expect } from 'vitest';
import type { TestHost } from './harness.js';

/** What the helpers need of a running application: a harness host or a custom one. */
export type Target = Pick<TestHost, 'baseUrl' | 'keys'>;

/** An HTTP answer, read completely. */
export interface Answer {
  status: number;
  headers: Headers;
  /** The raw body text. */
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

/** A message as `GET /inbox/api/messages` lists it (docs/http-api.md#local-inbox). */
export interface InboxMessage {
  id: string;
  kind: 'plain' | 'interactive';
  text: string;
  html: string;
  buttons: { text: string; value: string; disabled: boolean }[];
  footer: string | null;
  selected: string | null;
}

/** A status answer (docs/http-api.md#response-200). */
export interface StatusBody {
  status: 'pending' | 'finished';
  external_reference_id?: string;
  responses: {
    user_email: string;
    option_value: string | null;
    timestamp: string | null;
    expired: boolean;
  }[];
}

export const notificationIdPattern = /^notif_[A-Za-z0-9]{24}$/;
export const requestIdPattern = /^req_[A-Za-z0-9]{24}$/;

/** Sends a request and reads the whole answer. */
export async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, init);
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** Options of a send. */
export interface SendOptions {
  /** The `X-API-Key` value; alice's key by default, null for none. */
  key?: string | null;
  idempotencyKey?: string;
  /** `application/json` by default, null for none. */
  contentType?: string | null;
  headers?: Record<string, string>;
}

/** Headers of an API call. */
export function apiHeaders(host: Target, options: SendOptions = {}): Record<string, string> {
  const key = options.key === undefined ? host.keys.alice : options.key;
  const contentType = options.contentType === undefined ? 'application/json' : options.contentType;
  return {
    ...(key === null ? {} : { 'x-api-key': key }),
    ...(contentType === null ? {} : { 'content-type': contentType }),
    ...(options.idempotencyKey === undefined ? {} : { 'idempotency-key': options.idempotencyKey }),
    ...options.headers,
  };
}

/** A raw body as `fetch` takes it. */
export const asBody = (raw: string | Uint8Array): string | Uint8Array<ArrayBuffer> =>
  typeof raw === 'string' ? raw : new Uint8Array(raw);

/** `POST /api/notify` with a JSON value (or a raw string / bytes body, sent as is). */
export function send(
  host: Target,
  body: unknown,
  options: SendOptions & { raw?: string | Uint8Array } = {},
): Promise<Answer> {
  return call(`${host.baseUrl}/api/notify`, {
    method: 'POST',
    headers: apiHeaders(host, options),
    body: options.raw === undefined ? JSON.stringify(body) : asBody(options.raw),
  });
}

/** `GET /api/notify/status/{id}`; alice's key by default. */
export function readStatus(
  host: Target,
  requestId: string,
  key: string | null = host.keys.alice,
): Promise<Answer> {
  return call(`${host.baseUrl}/api/notify/status/${requestId}`, {
    headers: key === null ? {} : { 'x-api-key': key },
  });
}

/** A user's messages in the local inbox. */
export async function inbox(host: Target, email: string): Promise<InboxMessage[]> {
  const answer = await call(`${host.baseUrl}/inbox/api/messages?email=${encodeURIComponent(email)}`);
  expect(answer.status).toBe(200);
  return answer.json as InboxMessage[];
}

/** The only message of a user (fails when there is not exactly one). */
export async function onlyMessage(host: Target, email: string): Promise<InboxMessage> {
  const messages = await inbox(host, email);
  expect(messages).toHaveLength(1);
  return messages[0]!;
}

/** Clicks a button of an inbox message. */
export function click(host: Target, messageId: string, value: string): Promise<Answer> {
  return call(`${host.baseUrl}/inbox/api/messages/${messageId}/click`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ value }),
  });
}

/** Asserts the specification's error shape (docs/http-api.md#error-reference, docs/http-api.md#error-reference), and the exact `details` when given. */
export function expectError(answer: Answer, status: number, details?: string | RegExp): string {
  expect({ status: answer.status, body: answer.json }).toMatchObject({ status, body: { status: 'error' } });
  expect(answer.headers.get('content-type')).toMatch(/^application\/json\b/);
  const body = answer.json as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['details', 'status']);
  expect(typeof body.details).toBe('string');
  const text = body.details as string;
  if (typeof details === 'string') expect(text).toBe(details);
  else if (details) expect(text).toMatch(details);
  return text;
}

/** Asserts a 200 with a JSON content type and answers the body. */
export function expectOk<T = Record<string, unknown>>(answer: Answer): T {
  expect({ status: answer.status, body: answer.json }).toMatchObject({ status: 200 });
  expect(answer.headers.get('content-type')).toMatch(/^application\/json\b/);
  return answer.json as T;
}

/** A valid fire-and-forget body. */
export const plainBody = (overrides: Record<string, unknown> = {}) => ({
  user_emails: ['bob@acme.test'],
  message: 'Deploy finished',
  ...overrides,
});

/** A valid `response_request`. */
export const responseRequest = (overrides: Record<string, unknown> = {}) => ({
  options: [
    { text: 'Approve', value: 'approve' },
    { text: 'Reject', value: 'reject' },
  ],
  timeout_minutes: 60,
  ...overrides,
});

/** A valid interactive body. */
export const interactiveBody = (
  overrides: Record<string, unknown> = {},
  rr: Record<string, unknown> = {},
) => ({
  user_emails: ['bob@acme.test'],
  message: 'Deploy *v2* to production?',
  response_request: responseRequest(rr),
  ...overrides,
});

/** Sends an interactive request that must succeed; answers its id. */
export async function createRequest(host: Target, body: unknown, key?: string): Promise<string> {
  const answer = await send(host, body, key === undefined ? {} : { key });
  const ok = expectOk<{ request_id: string }>(answer);
  expect(ok.request_id).toMatch(requestIdPattern);
  return ok.request_id;
}

/** Reads a status that must succeed. */
export async function statusOf(host: Target, requestId: string, key?: string): Promise<StatusBody> {
  return expectOk<StatusBody>(await readStatus(host, requestId, key));
}

/** Rate limits high enough never to interfere with tests about something else. */
export const generousLimits = {
  perKey: { burst: 100_000, perSecond: 100_000 },
  perOrganization: { burst: 100_000, perSecond: 100_000 },
};

/** Epoch ms of the manual clock's start. */
export const clockStart = Date.parse('2026-01-01T00:00:00.000Z');

/** Creates a fresh key of acme for `email` through the library's key management. */
export async function createKey(
  host: TestHost,
  email: string,
  admin = false,
): Promise<{ apiKey: string; id: string; userId: string }> {
  const [user] = await host.storage.directory.findUsersByEmail('acme', [email]);
  if (!user) throw new Error(`no user ${email}`);
  const created = await host.notifier.apiKeys.create({ userId: user.id, admin }, `tests ${email}`);
  return { apiKey: created.apiKey, id: created.key.id, userId: user.id };
}

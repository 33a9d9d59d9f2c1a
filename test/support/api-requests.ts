/**
 * Requests through a notifier's own handler, in process, as alice of the test seed: one set of
 * bodies, a send and a status read, for the benchmarks and the tests that drive the core without
 * a host.
 */
import type { HttpResponse, Notifier } from '../../core/index.js';
import { testKeys } from './test-seed.js';

/** A fire-and-forget body to `recipients`, with a little markdown, as most sends carry. */
export const plainBody = (recipients: readonly string[] = ['bob@acme.test']): string =>
  JSON.stringify({ user_emails: recipients, message: 'Deploy *v2* finished' });

/** An interactive body to `recipients`: two options, `timeoutMinutes` to answer, and any `callbackUrl`. */
export const interactiveBody = (
  recipients: readonly string[] = ['bob@acme.test'],
  timeoutMinutes = 30,
  message = 'Approve?',
  callbackUrl?: string,
): string =>
  JSON.stringify({
    user_emails: recipients,
    message,
    response_request: {
      options: [
        { text: 'Yes', value: 'yes' },
        { text: 'No', value: 'no' },
      ],
      timeout_minutes: timeoutMinutes,
      ...(callbackUrl === undefined ? {} : { callback_url: callbackUrl }),
    },
  });

/** `POST /api/notify` with `body` through the handler, as alice, with any extra headers. */
export const post = (
  notifier: Pick<Notifier, 'handle'>,
  body: string,
  headers: Record<string, string> = {},
): Promise<HttpResponse | null> =>
  notifier.handle({
    method: 'POST',
    url: '/api/notify',
    headers: { 'x-api-key': testKeys.alice, 'content-type': 'application/json', ...headers },
    body: [new TextEncoder().encode(body)],
    clientAddress: '127.0.0.1',
  });

/** `GET /api/notify/status/:requestId` through the handler, as alice. */
export const readStatus = (
  notifier: Pick<Notifier, 'handle'>,
  requestId: string,
): Promise<HttpResponse | null> =>
  notifier.handle({
    method: 'GET',
    url: `/api/notify/status/${requestId}`,
    headers: { 'x-api-key': testKeys.alice },
    body: null,
    clientAddress: '127.0.0.1',
  });

/** A message as `GET /inbox/api/messages` lists it, in the fields the tests look at. */
export interface ListedInboxMessage {
  selected: string | null;
  buttons: { disabled: boolean }[];
}

/** The messages the local inbox lists for `email`, through the handler. */
export async function inboxOf(
  notifier: Pick<Notifier, 'handle'>,
  email: string,
): Promise<ListedInboxMessage[]> {
  const listed = await notifier.handle({
    method: 'GET',
    url: `/inbox/api/messages?email=${encodeURIComponent(email)}`,
    headers: {},
    body: null,
    clientAddress: '127.0.0.1',
  });
  return JSON.parse(listed?.body ?? '[]') as ListedInboxMessage[];
}

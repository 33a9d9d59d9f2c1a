import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  call,
  createRequest,
  expectError,
  expectOk,
  generousLimits,
  interactiveBody,
  plainBody,
  readStatus,
  send,
} from './client.js';
import { hostKinds, startTestHost, type TestHost } from './harness.js';
import { rawRequest } from './raw-request.js';

describe.each(hostKinds)('GET /api/notify/status/{request_id} (%s)', (kind) => {
  let host: TestHost;
  beforeEach(async () => {
    host = await startTestHost(kind, { rateLimits: generousLimits });
  });
  afterEach(async () => {
    await host.close();
  });

  it('answers 200 with the status body and a JSON content type', async () => {
    const id = await createRequest(
      host,
      interactiveBody({ user_emails: ['bob@acme.test'], external_reference_id: 'ref-1' }),
    );
    const answer = await readStatus(host, id);
    expect(expectOk(answer)).toEqual({
      status: 'pending',
      external_reference_id: 'ref-1',
      responses: [{ user_email: 'bob@acme.test', option_value: null, timestamp: null, expired: false }],
    });
  });

  it('leaves a body within the 64 KiB limit sent with the GET unread, and answers the status', async () => {
    const id = await createRequest(host, interactiveBody());
    const answer = await rawRequest(host.origin, {
      path: `${new URL(host.baseUrl).pathname.replace(/\/$/, '')}/api/notify/status/${id}`,
      headers: {
        'x-api-key': host.keys.alice,
        'content-type': 'text/plain',
        'content-length': String(60 * 1024),
      },
      body: 'x'.repeat(60 * 1024),
    });
    expect(answer.status).toBe(200);
    // The connection stays usable: the next request on the same host is answered.
    expect(expectOk(await readStatus(host, id))).toMatchObject({ status: 'pending' });
  });

  it('lets any key of the same organization read the request', async () => {
    const id = await createRequest(host, interactiveBody());
    expect(expectOk(await readStatus(host, id, host.keys.bob))).toMatchObject({ status: 'pending' });
  });

  it.each([
    ['too short', 'req_abc'],
    ['23 characters', `req_${'A'.repeat(23)}`],
    ['25 characters', `req_${'A'.repeat(25)}`],
    ['wrong prefix', `request_${'A'.repeat(24)}`],
    ['upper-case prefix', `REQ_${'A'.repeat(24)}`],
    ['a notification id', `notif_${'A'.repeat(24)}`],
    ['non-base62 character', `req_${'A'.repeat(23)}-`],
    ['underscore inside', `req_${'A'.repeat(23)}_`],
    ['encoded space', `req_${'A'.repeat(23)}%20`],
    ['non-ASCII', `req_${'A'.repeat(23)}%C3%A9`],
    ['plain word', 'status'],
  ])('answers 400 Invalid request_id format for %s', async (_name, requestId) => {
    expectError(await readStatus(host, requestId), 400, 'Invalid request_id format');
  });

  it('answers 400 for the notification_id of a fire-and-forget send', async () => {
    const sent = expectOk(await send(host, plainBody()));
    expectError(await readStatus(host, sent.notification_id as string), 400, 'Invalid request_id format');
  });

  it('answers 404 Request not found for a well-formed unknown id', async () => {
    expectError(await readStatus(host, `req_${'Z'.repeat(24)}`), 404, 'Request not found');
  });

  it("answers 404 Request not found for another organization's request (gina reading acme's)", async () => {
    const id = await createRequest(host, interactiveBody());
    expectError(await readStatus(host, id, host.keys.gina), 404, 'Request not found');
    // Still readable by its own organization.
    expectOk(await readStatus(host, id, host.keys.alice));
  });

  it('answers 401 Missing API key without a key', async () => {
    const id = await createRequest(host, interactiveBody());
    expectError(await readStatus(host, id, null), 401, 'Missing API key');
  });

  it('answers 401 Invalid API key for an unknown key', async () => {
    const id = await createRequest(host, interactiveBody());
    expectError(await readStatus(host, id, 'cnk_not_a_real_key_000000000000000000'), 401, 'Invalid API key');
  });

  it('checks the key before anything else: an invalid id with no key is 401', async () => {
    expectError(await readStatus(host, 'nonsense', null), 401, 'Missing API key');
    expectError(await readStatus(host, `req_${'Z'.repeat(24)}`, 'wrong'), 401, 'Invalid API key');
  });

  it('does not serve the status endpoint for other methods', async () => {
    const id = await createRequest(host, interactiveBody());
    const answer = await call(`${host.baseUrl}/api/notify/status/${id}`, {
      method: 'POST',
      headers: { 'x-api-key': host.keys.alice, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
    expectError(answer, answer.status);
  });
});

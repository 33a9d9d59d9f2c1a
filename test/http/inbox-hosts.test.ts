import { afterEach, describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { hostKinds, startTestHost, type TestHost } from './harness.js';
import { rawRequest } from './raw-request.js';

const refusal = (host: string) => ({
  status: 'error',
  details: `The inbox does not answer requests for the host ${JSON.stringify(host)}: only localhost, IP addresses and the names of its allowedHosts (NOTIFY_INBOX_HOSTS in the standalone service)`,
});

describe.each(hostKinds)('the inbox against DNS rebinding (%s, docs/http-api.md#local-inbox)', (kind) => {
  let host: TestHost;
  afterEach(async () => {
    await host.close();
  });

  const inboxAt = (path: string, hostHeader: string, method = 'GET', body?: string) =>
    rawRequest(host.origin, {
      method,
      path: `/chat/inbox${path}`,
      headers: { host: hostHeader, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body }),
    });

  it('refuses the page and every API route for a host name of another site, with 403 in the error shape', async () => {
    host = await startTestHost(kind);
    for (const [path, method, body] of [
      ['', 'GET'],
      ['/', 'GET'],
      ['/api/users', 'GET'],
      ['/api/messages?email=bob@acme.test', 'GET'],
      ['/api/messages/msg_x.y/click', 'POST', '{"value":"approve"}'],
    ] as const) {
      const answer = await inboxAt(path, 'rebind.attacker.example:8080', method, body);
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.json).toEqual(refusal('rebind.attacker.example:8080'));
    }
  });

  it('answers localhost, its subdomains and IP addresses, with any port and a trailing dot', async () => {
    host = await startTestHost(kind);
    for (const hostHeader of [
      'localhost',
      'LOCALHOST:3000',
      'localhost.:3000',
      'inbox.localhost:3000',
      '127.0.0.1:3000',
      '10.1.2.3',
      '[::1]:3000',
      '[fe80::1]',
    ]) {
      expect((await inboxAt('/api/users', hostHeader)).status, hostHeader).toBe(200);
    }
    for (const hostHeader of ['localhost.attacker.example', '127.0.0.1.attacker.example', '0x7f.1', '[::1']) {
      expect((await inboxAt('/api/users', hostHeader)).status, hostHeader).toBe(403);
    }
  });

  it('answers the names of allowedHosts, in any case, and leaves the API alone', async () => {
    host = await startTestHost(kind, { inboxAllowedHosts: ['Inbox.Internal.Example.'] });
    expect((await inboxAt('/api/users', 'inbox.internal.example:3000')).status).toBe(200);
    expect((await inboxAt('/api/users', 'INBOX.internal.example.')).status).toBe(200);
    expect((await inboxAt('/api/users', 'other.internal.example')).status).toBe(403);
    const status = await rawRequest(host.origin, {
      path: '/chat/api/notify/status/req_000000000000000000000000',
      headers: { host: 'other.internal.example', 'x-api-key': host.keys.alice },
    });
    expect(status.status).toBe(404);
  });

  it('answers any host with allowedHosts: true', async () => {
    host = await startTestHost(kind, { inboxAllowedHosts: true });
    expect((await inboxAt('/api/users', 'anything.example')).status).toBe(200);
  });
});

describe('inboxTransport({ allowedHosts })', () => {
  it('refuses what is no list of host names', () => {
    expect(() => inboxTransport({ allowedHosts: 'inbox.example' as never })).toThrow(
      'inboxTransport: allowedHosts must be a list of host names or true (any host), got string',
    );
    for (const wrong of ['https://inbox.example', 'inbox.example:3000', '', 'in box.example', 42]) {
      expect(() => inboxTransport({ allowedHosts: [wrong as string] })).toThrow(
        `inboxTransport: allowedHosts holds ${JSON.stringify(wrong)}, which is no host name`,
      );
    }
  });
});

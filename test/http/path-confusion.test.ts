import { afterEach, describe, expect, it } from 'vitest';
import { expectOk, inbox, plainBody } from './client.js';
import { hostKinds, startTestHost, type TestHost } from './harness.js';
import { rawRequest } from './raw-request.js';

/** Paths that resolve, or collapse, to `/api/notify` without naming it literally. */
const confusingSendPaths = [
  '//evil.example/api/notify',
  '//api/notify',
  '/api//notify',
  '/api/notify//',
  '/api/notify/',
  '/api/notify/../notify',
  '/api/x/../notify',
  '/api/./notify',
  '/./api/notify',
  '/api%2Fnotify',
  '/api%2fnotify',
  '/%61pi/notify',
  '/api/notify%2F',
  '/api/notify%3Fx=1',
];

describe.each(hostKinds)('routing on the path as received (%s)', (kind) => {
  let host: TestHost;
  afterEach(async () => {
    await host.close();
  });

  describe.each([
    ['at the root', ''],
    ['under /chat', '/chat'],
  ])('mounted %s', (_name, mount) => {
    /** A send that would be accepted on `/api/notify`, to the given path under the mount. */
    const sendTo = (path: string) => sendToTarget(`${mount}${path}`);
    /** The same send to a request target written out whole. */
    const sendToTarget = (target: string) =>
      rawRequest(host.origin, {
        method: 'POST',
        path: target,
        headers: { 'x-api-key': host.keys.alice, 'content-type': 'application/json' },
        body: JSON.stringify(plainBody()),
      });

    it.each(confusingSendPaths)('does not serve %s as the send endpoint', async (path) => {
      host = await startTestHost(kind, { mount });
      const answer = await sendTo(path);
      expect(answer.status).toBe(404);
      expect(await inbox(host, 'bob@acme.test')).toEqual([]);
    });

    it('still serves the literal path, with or without a query', async () => {
      host = await startTestHost(kind, { mount });
      expectOk(await sendTo('/api/notify'));
      expectOk(await sendTo('/api/notify?next=//evil.example/api/notify'));
      expectOk(await sendTo('/api/notify?'));
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(3);
    });

    it('does not serve the status endpoint or the inbox under confusing paths', async () => {
      host = await startTestHost(kind, { mount });
      const requestId = `req_${'A'.repeat(24)}`;
      for (const path of [
        `//evil.example/api/notify/status/${requestId}`,
        `/api/notify/status//${requestId}`,
        `/api/notify//status/${requestId}`,
        `/api/notify/x/../status/${requestId}`,
        '//inbox/api/messages?email=bob%40acme.test',
        '/inbox/api/../api/messages?email=bob%40acme.test',
        '/inbox%2Fapi%2Fmessages?email=bob%40acme.test',
      ]) {
        const answer = await rawRequest(host.origin, {
          path: `${mount}${path}`,
          headers: { 'x-api-key': host.keys.alice },
        });
        expect(answer.status, path).toBe(404);
      }
      const literal = await rawRequest(host.origin, {
        path: `${mount}/inbox/api/messages?email=bob%40acme.test`,
      });
      expect(literal.json).toEqual([]);
    });

    it('serves a target in absolute form by its path, as RFC 9112 requires of servers', async () => {
      host = await startTestHost(kind, { mount });
      const authority = new URL(host.origin).host;
      expectOk(await sendToTarget(`http://${authority}${mount}/api/notify`));
      expectOk(await sendToTarget(`HTTPS://other.example${mount}/api/notify?x=1`));
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(2);
      for (const path of [
        `http://${authority}${mount}/api/x/../notify`,
        `http://${authority}//${mount}/api/notify`,
        `ftp://${authority}${mount}/api/notify`,
      ]) {
        expect((await sendToTarget(path)).status, path).toBe(404);
      }
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(2);
      const messages = await rawRequest(host.origin, {
        path: `http://${authority}${mount}/inbox/api/messages?email=bob%40acme.test`,
      });
      expect(messages.json).toHaveLength(2);
    });
  });
});

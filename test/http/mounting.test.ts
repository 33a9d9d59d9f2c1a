import { afterEach, describe, expect, it } from 'vitest';
import {
  call,
  expectError,
  expectOk,
  inbox,
  interactiveBody,
  notificationIdPattern,
  plainBody,
  readStatus,
  send,
} from './client.js';
import { type CustomApp, gate, heldDeliveries, startCustomApp } from './custom-app.js';
import { hostKinds, startTestHost, type TestHost } from './harness.js';

describe.each(hostKinds)('mounting in an application (%s)', (kind) => {
  describe('the harness application (API at /chat)', () => {
    let host: TestHost;
    afterEach(async () => {
      await host.close();
    });

    it("leaves the application's own routes outside the mount working", async () => {
      host = await startTestHost(kind);
      const answer = await call(`${host.origin}/outside`);
      expect(answer.status).toBe(200);
      expect(answer.json).toEqual({ outside: true });
      // And the API still answers under its mount.
      expectOk(await send(host, plainBody()));
    });

    it('serves the API only under its mount point', async () => {
      host = await startTestHost(kind);
      const answer = await call(`${host.origin}/api/notify`, {
        method: 'POST',
        headers: { 'x-api-key': host.keys.alice, 'content-type': 'application/json' },
        body: JSON.stringify(plainBody()),
      });
      expect(answer.status).toBe(404);
      expect(await inbox(host, 'bob@acme.test')).toEqual([]);
    });

    it('passes unknown paths inside the mount on to the application, which answers its own 404', async () => {
      host = await startTestHost(kind);
      for (const path of ['/nope', '/api', '/api/notify/extra', '/api/notify/status', '/inbox/api/unknown']) {
        const answer = await call(`${host.baseUrl}${path}`, { headers: { 'x-api-key': host.keys.alice } });
        expect(answer.status, path).toBe(404);
      }
      // The application keeps working afterwards.
      expect((await call(`${host.origin}/outside`)).json).toEqual({ outside: true });
    });

    it('works at any mount point, including a deep one', async () => {
      host = await startTestHost(kind, { mount: '/deep/er/notify' });
      expect(host.baseUrl.endsWith('/deep/er/notify')).toBe(true);
      const sent = expectOk(await send(host, plainBody()));
      expect(sent.notification_id).toMatch(notificationIdPattern);
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(1);
      expectError(await readStatus(host, 'bad'), 400, 'Invalid request_id format');
      expect((await call(`${host.origin}/outside`)).json).toEqual({ outside: true });
      expect((await call(`${host.origin}/chat/api/notify`, { method: 'POST' })).status).toBe(404);
    });

    it('serves the inbox and the OpenAPI document under the mount', async () => {
      host = await startTestHost(kind, { mount: '/x' });
      expect((await call(`${host.baseUrl}/openapi.json`)).status).toBe(200);
      expect((await call(`${host.baseUrl}/inbox/api/messages?email=bob%40acme.test`)).json).toEqual([]);
    });

    it('names its mount as the server of the OpenAPI document, so that a tool calls the API there', async () => {
      host = await startTestHost(kind, { mount: '/deep/er/notify' });
      const doc = expectOk<{ servers: { url: string }[] }>(await call(`${host.baseUrl}/openapi.json`));
      expect(doc.servers).toEqual([{ url: '/deep/er/notify' }]);
      const documentUrl = `${host.baseUrl}/openapi.json`;
      const sendUrl = new URL(`${doc.servers[0]?.url}/api/notify`, documentUrl).toString();
      expect(sendUrl).toBe(`${host.origin}/deep/er/notify/api/notify`);
      const answer = await call(sendUrl, {
        method: 'POST',
        headers: { 'x-api-key': host.keys.alice, 'content-type': 'application/json' },
        body: JSON.stringify(plainBody()),
      });
      expect(answer.status).toBe(200);
    });
  });

  describe('an application of its own', () => {
    let app: CustomApp;
    afterEach(async () => {
      await app.close();
    });

    it("reaches the application's routes inside and outside the mount, with their own body parser", async () => {
      app = await startCustomApp(kind);
      const custom = await call(`${app.baseUrl}/custom`);
      expect(custom.status).toBe(200);
      expect(custom.json).toEqual({ custom: true });
      // A body parser placed after the API still sees the bodies of the application's routes.
      const echo = await call(`${app.origin}/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ hello: 'world' }),
      });
      expect(echo.status).toBe(200);
      expect(echo.json).toEqual({ echoed: { hello: 'world' } });
      expectOk(await send(app, plainBody()));
    });

    it('fails loudly with a 500 in the error shape when a body parser runs before the API', async () => {
      app = await startCustomApp(kind, { bodyParserFirst: true });
      const answer = await send(app, plainBody());
      const details = expectError(answer, 500);
      expect(details).toMatch(/body parser/i);
      expect(details).toMatch(/before/i);
      expect(await inbox(app, 'bob@acme.test')).toEqual([]);
    });

    it('after a body parser that marks every request parsed (Express 4, koa-bodyparser), still answers the routes that read no body', async () => {
      app = await startCustomApp(kind, { bodyParserFirst: true });
      const sent = await app.notifier.handle({
        method: 'POST',
        url: '/api/notify',
        headers: { 'x-api-key': app.keys.alice, 'content-type': 'application/json' },
        body: [new TextEncoder().encode(JSON.stringify(interactiveBody()))],
        clientAddress: '127.0.0.1',
      });
      const { request_id: requestId } = JSON.parse(sent?.body ?? '{}') as { request_id: string };
      expect(expectOk<{ status: string }>(await readStatus(app, requestId)).status).toBe('pending');
      expect((await call(`${app.baseUrl}/openapi.json`)).status).toBe(200);
      expect(await inbox(app, 'bob@acme.test')).toHaveLength(1);
    });

    it("mounted at the root after a body parser, leaves the application's own routes working", async () => {
      app = await startCustomApp(kind, { bodyParserFirst: true, mountAtRoot: true });
      const echo = await call(`${app.origin}/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ hello: 'world' }),
      });
      expect(echo.status).toBe(200);
      expect(echo.json).toEqual({ echoed: { hello: 'world' } });
      const custom = await call(`${app.origin}/chat/custom`);
      expect(custom.json).toEqual({ custom: true });
      // Only a path the library serves says that its body was consumed.
      expect(expectError(await send(app, plainBody()), 500)).toMatch(/body parser/i);
      const click = await call(`${app.origin}/inbox/api/messages/msg_1/click`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ value: 'yes' }),
      });
      expect(expectError(click, 500)).toMatch(/body parser/i);
      expect(await inbox(app, 'bob@acme.test')).toEqual([]);
    });

    it('behind a request timeout that answers first, finishes the send and keeps the process up', async () => {
      const held = gate();
      let delivered = () => {};
      const done = new Promise<void>((resolve) => {
        delivered = resolve;
      });
      app = await startCustomApp(kind, {
        wrapTransport: heldDeliveries(held.promise, { delivered }),
        answerTimeoutMs: 100,
      });
      const timedOut = await send(app, plainBody());
      expect(timedOut.status).toBe(503);
      expect(timedOut.json).toEqual({ error: 'timeout' });
      held.open();
      await done;
      // The library's own answer, written after the timeout's, would have thrown outside any catch
      // (an unhandled rejection fails this run, and ends a process).
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await inbox(app, 'bob@acme.test')).toHaveLength(1);
      expect((await call(`${app.origin}/chat/custom`)).json).toEqual({ custom: true });
    });
  });
});

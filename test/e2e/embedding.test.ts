import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createExpressApp } from '../../examples/embed-express/app.js';
import { createKoaApp } from '../../examples/embed-koa/app.js';
import { demoApiKey } from '../../examples/standalone/demo-seed.js';

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
});

async function listen(listener: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(listener);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const send = (base: string, path = '/notifications/api/notify') =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'x-api-key': demoApiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ user_emails: ['bob@acme.test'], message: 'Deployed *v2*' }),
  });

describe('the embedding examples', () => {
  it('Express: the API under /notifications, and the application keeps its own routes and body parser', async () => {
    const { app } = await createExpressApp();
    const base = await listen(app);
    const sent = await send(base);
    expect(sent.status).toBe(200);
    expect(await sent.json()).toMatchObject({
      status: 'ok',
      notification_id: expect.stringMatching(/^notif_/),
    });
    const inbox = await fetch(`${base}/notifications/inbox/api/messages?email=bob@acme.test`);
    expect(await inbox.json()).toMatchObject([
      { text: 'Deployed *v2*', html: '<p>Deployed <strong>v2</strong></p>' },
    ]);
    const own = await fetch(`${base}/deployments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"version":"v2"}',
    });
    expect(await own.json()).toEqual({ deploying: { version: 'v2' } });
    // The mount path is matched as sent, as every path of the API is (Koa's prefix is too).
    expect((await send(base, '/NOTIFICATIONS/api/notify')).status).toBe(404);
  });

  it('Koa: the API under /notifications, and the application keeps its own routes', async () => {
    const { app } = await createKoaApp();
    const base = await listen(app.callback());
    const sent = await send(base);
    expect(sent.status).toBe(200);
    expect(await sent.json()).toMatchObject({
      status: 'ok',
      notification_id: expect.stringMatching(/^notif_/),
    });
    expect(await (await fetch(`${base}/hello`)).json()).toEqual({ hello: 'world' });
    expect((await send(base, '/NOTIFICATIONS/api/notify')).status).toBe(404);
    const openapi = await fetch(`${base}/notifications/openapi.json`);
    expect((await openapi.json()).openapi).toBe('3.1.0');
  });
});

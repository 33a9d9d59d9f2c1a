// The README's "Receiving callbacks" snippets, run for real: Express and Koa must hand verifyCallback the raw body.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Koa from 'koa';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { type CallbackEvent, CallbackVerificationError, verifyCallback } from '../../client/index.js';

const requestId = 'req_AbCdEfGhIjKlMnOpQrStUvWx';
/** Secrets saved at send time (`created.callback_secret`), by request id. */
const secrets = new Map([[requestId, `whsec_${randomBytes(32).toString('base64')}`]]);

/** The secret of the request a raw body names; verifyCallback then checks the body really is that request's. */
function secretFor(raw: Buffer): string | undefined {
  try {
    return secrets.get((JSON.parse(raw.toString('utf8')) as { request_id?: unknown }).request_id as string);
  } catch {
    return undefined;
  }
}

const event: CallbackEvent = {
  type: 'request.finished',
  request_id: requestId,
  status: 'finished',
  responses: [
    {
      user_email: 'bob@acme.test',
      option_value: 'yes',
      timestamp: '2025-01-01T00:00:00.000Z',
      expired: false,
    },
  ],
  finished_at: '2025-01-01T00:00:00.000Z',
};
// Deliberately not the formatting JSON.stringify would produce: re-serializing breaks the signature.
const payload = JSON.stringify(event, null, 1);

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  if (!server.listening) await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/notify`;
}

async function deliver(
  url: string,
  {
    secret = secrets.get(requestId) ?? '',
    signed = payload,
    sent = signed,
  }: { secret?: string; signed?: string; sent?: string } = {},
): Promise<{ status: number; text: string }> {
  const date = new Date();
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': 'msg_AbCdEfGhIjKlMnOpQrStUvWx',
      'webhook-timestamp': String(Math.floor(date.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign('msg_AbCdEfGhIjKlMnOpQrStUvWx', date, signed),
    },
    body: sent,
  });
  return { status: response.status, text: await response.text() };
}

/** What both receivers must answer. */
async function expectReceiver(url: string, handled: CallbackEvent[]): Promise<void> {
  expect(await deliver(url)).toEqual({ status: 204, text: '' });
  expect(handled).toEqual([event]);
  const tampered = await deliver(url, { sent: payload.replace('"yes"', '"no"') });
  expect(tampered).toEqual({ status: 400, text: 'signature_mismatch' });
  const forged = await deliver(url, { secret: `whsec_${randomBytes(32).toString('base64')}` });
  expect(forged).toEqual({ status: 400, text: 'signature_mismatch' });
  const unsigned = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: payload,
  });
  expect({ status: unsigned.status, text: await unsigned.text() }).toEqual({
    status: 400,
    text: 'missing_headers',
  });
  const unknown = payload.replace(requestId, 'req_000000000000000000000000');
  expect(await deliver(url, { signed: unknown })).toEqual({ status: 400, text: 'unknown request' });
  expect(handled).toHaveLength(1);
}

describe('receiving callbacks', () => {
  it('in Express, with express.raw on the route', async () => {
    const handled: CallbackEvent[] = [];
    const app = express();
    // The raw bytes, for this route only; register it before any app-wide express.json().
    app.post('/hooks/notify', express.raw({ type: 'application/json' }), (req, res) => {
      const raw = req.body as Buffer;
      const secret = secretFor(raw);
      if (secret === undefined) {
        res.status(400).send('unknown request');
        return;
      }
      try {
        handled.push(verifyCallback(secret, req.headers, raw));
      } catch (error) {
        if (!(error instanceof CallbackVerificationError)) throw error;
        res.status(400).send(error.reason);
        return;
      }
      res.sendStatus(204);
    });
    app.use(express.json());
    await expectReceiver(await listen(app.listen(0, '127.0.0.1')), handled);
  });

  it('in Koa, reading the raw body from ctx.req', async () => {
    const handled: CallbackEvent[] = [];
    const app = new Koa();
    // Before any body parser: the stream can be read only once.
    app.use(async (ctx, next) => {
      if (ctx.method !== 'POST' || ctx.path !== '/hooks/notify') return next();
      const chunks: Buffer[] = [];
      for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
      const raw = Buffer.concat(chunks);
      const secret = secretFor(raw);
      ctx.status = 400;
      if (secret === undefined) {
        ctx.body = 'unknown request';
        return;
      }
      try {
        handled.push(verifyCallback(secret, ctx.headers, raw));
        ctx.status = 204;
      } catch (error) {
        if (!(error instanceof CallbackVerificationError)) throw error;
        ctx.body = error.reason;
      }
    });
    await expectReceiver(await listen(app.listen(0, '127.0.0.1')), handled);
  });
});

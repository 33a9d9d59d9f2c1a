import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { expect, it } from 'vitest';
import { CallbackVerificationError, createClient, verifyCallback } from '../../client/index.js';
import { silentLogger } from '../../core/ports/logger.js';
import { startStandalone } from '../../examples/standalone/app.js';
import { readConfig } from '../../examples/standalone/config.js';
import { demoApiKey } from '../../examples/standalone/demo-seed.js';

it("verifies the service's own completion callback, as received over HTTP", async () => {
  const received: { headers: IncomingHttpHeaders; body: Buffer }[] = [];
  const receiver = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({ headers: req.headers, body: Buffer.concat(chunks) });
    res.writeHead(204).end();
    receiver.emit('callback');
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/notify`;

  const service = await startStandalone(
    readConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      NOTIFY_STORAGE: 'memory',
      LOG_LEVEL: 'error',
      NOTIFY_ALLOW_INSECURE_CALLBACKS: '1',
    }),
    silentLogger,
  );
  const base = `http://127.0.0.1:${service.port}`;
  try {
    const client = createClient({ baseUrl: base, apiKey: demoApiKey });
    const created = await client.send({
      user_emails: ['bob@acme.test'],
      message: 'Ship it?',
      external_reference_id: 'ship-7',
      response_request: {
        options: [
          { text: 'Yes', value: 'yes' },
          { text: 'No', value: 'no' },
        ],
        timeout_minutes: 10,
        callback_url: hook,
      },
    });
    expect(created.callback_secret).toMatch(/^whsec_/);
    const secret = created.callback_secret ?? '';

    const callbackArrived = once(receiver, 'callback');
    const messages = (await (await fetch(`${base}/inbox/api/messages?email=bob@acme.test`)).json()) as {
      id: string;
    }[];
    const clicked = await fetch(`${base}/inbox/api/messages/${messages[0]?.id}/click`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ value: 'yes' }),
    });
    expect(clicked.status).toBe(200);
    await Promise.race([
      callbackArrived,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error('no callback within 10 s')), 10_000).unref(),
      ),
    ]);

    const [callback] = received;
    if (callback === undefined) throw new Error('no callback');
    const event = verifyCallback(secret, callback.headers, callback.body);
    expect(event).toEqual({
      type: 'request.finished',
      request_id: created.request_id,
      status: 'finished',
      external_reference_id: 'ship-7',
      responses: [(await client.status(created.request_id)).responses[0]],
      finished_at: expect.stringMatching(/Z$/),
    });
    expect(verifyCallback(secret, callback.headers, callback.body.toString('utf8'))).toEqual(event);
    // The official library agrees.
    expect(
      new Webhook(secret).verify(callback.body.toString('utf8'), callback.headers as Record<string, string>),
    ).toEqual(event);
    // A re-serialized body is not the raw body; another request's secret does not match.
    expect(() => verifyCallback(secret, callback.headers, JSON.stringify(event, null, 2))).toThrow(
      CallbackVerificationError,
    );
  } finally {
    await service.close();
    receiver.closeAllConnections();
    receiver.close();
  }
});

import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, NotifyClientError } from '../../client/index.js';

/**
 * The client with Node's own fetch against local servers that answer as a misconfigured proxy or a
 * stalled service would: a redirect to another origin, no answer, half an answer.
 */
const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

interface Hit {
  url: string;
  apiKey: string | undefined;
  idempotencyKey: string | undefined;
}

async function serve(answer: (req: IncomingMessage, res: ServerResponse) => void) {
  const hits: Hit[] = [];
  const server = createServer((req, res) => {
    hits.push({
      url: req.url ?? '',
      apiKey: req.headers['x-api-key'] as string | undefined,
      idempotencyKey: req.headers['idempotency-key'] as string | undefined,
    });
    req.resume();
    answer(req, res);
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

const plain = { user_emails: ['bob@acme.test'], message: 'hello' };

describe('the client against servers it should not trust blindly', () => {
  it('follows no redirect: the API key never reaches the origin it points to', async () => {
    const elsewhere = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'ok', notification_id: 'notif_AbCdEfGhIjKlMnOpQrStUvWx' }));
    });
    for (const status of [301, 302, 303, 307, 308]) {
      const service = await serve((_req, res) => {
        res.writeHead(status, { location: `${elsewhere.url}/steal` });
        res.end();
      });
      const client = createClient({ baseUrl: service.url, apiKey: 'cnk_secret_key' });
      const failure = await client.send(plain).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(NotifyClientError);
      expect(failure).toMatchObject({ status });
      expect((failure as NotifyClientError).details).toContain(`redirect to ${elsewhere.url}/steal`);
      expect(service.hits).toHaveLength(1);
    }
    expect(elsewhere.hits).toEqual([]);
  });

  it.each([
    ['answers nothing', (_req: IncomingMessage, _res: ServerResponse) => {}],
    [
      'sends its headers and stalls the body',
      (_req: IncomingMessage, res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '200' });
        res.write('{"status":');
      },
    ],
  ])(
    'gives up an attempt to a server that %s after attemptTimeoutMs, and retries it with the same key',
    async (_what, answer) => {
      const service = await serve(answer);
      const client = createClient({
        baseUrl: service.url,
        apiKey: 'cnk_secret_key',
        attemptTimeoutMs: 200,
        retry: { maxAttempts: 2, baseDelayMs: 0 },
      });
      const started = Date.now();
      const failure = await client.send(plain).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(NotifyClientError);
      expect(failure).toMatchObject({ status: 0, details: 'No whole answer within 200 ms' });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(service.hits).toHaveLength(2);
      expect(service.hits[1]?.idempotencyKey).toBe(service.hits[0]?.idempotencyKey);
      expect((failure as NotifyClientError).idempotencyKey).toBe(service.hits[0]?.idempotencyKey);
    },
  );

  it('waits out the 409s of a send still running after its attempt timed out, without counting them, and gets its answer', async () => {
    let hits = 0;
    const service = await serve((_req, res) => {
      hits += 1;
      if (hits === 1) return; // the first attempt's answer never comes: the send runs on
      if (hits <= 4) {
        res.writeHead(409, { 'content-type': 'application/json', 'retry-after': '1' });
        res.end(
          JSON.stringify({
            status: 'error',
            details: 'A request with this Idempotency-Key is still being processed',
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'ok', notification_id: 'notif_AbCdEfGhIjKlMnOpQrStUvWx' }));
    });
    const delays: number[] = [];
    const client = createClient({
      baseUrl: service.url,
      apiKey: 'cnk_secret_key',
      attemptTimeoutMs: 200,
      retry: { maxAttempts: 2, baseDelayMs: 0 },
      sleep: async (ms) => {
        delays.push(ms);
      },
    });
    expect(await client.send(plain)).toEqual({
      status: 'ok',
      notification_id: 'notif_AbCdEfGhIjKlMnOpQrStUvWx',
    });
    expect(service.hits).toHaveLength(5);
    expect(new Set(service.hits.map((hit) => hit.idempotencyKey)).size).toBe(1);
    expect(delays.slice(1)).toEqual([1000, 1000, 1000]);
  });

  it('leaves no listener on a caller signal shared by many calls', async () => {
    const service = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'pending', responses: [] }));
    });
    const client = createClient({ baseUrl: service.url, apiKey: 'cnk_secret_key' });
    const shared = new AbortController().signal;
    for (let call = 0; call < 20; call += 1) {
      await client.status('req_AbCdEfGhIjKlMnOpQrStUvWx', { signal: shared });
    }
    expect(getEventListeners(shared, 'abort')).toHaveLength(0);
  });

  it('takes an attempt time in fractions of a millisecond, as a whole one', async () => {
    const service = await serve(() => {});
    const client = createClient({
      baseUrl: service.url,
      apiKey: 'cnk_secret_key',
      attemptTimeoutMs: 150.5,
      retry: { maxAttempts: 1 },
    });
    await expect(client.status('req_AbCdEfGhIjKlMnOpQrStUvWx')).rejects.toMatchObject({
      status: 0,
      details: 'No whole answer within 151 ms',
    });
  });

  it('still lets the caller abort an attempt, with the abort reason', async () => {
    const service = await serve(() => {});
    const client = createClient({ baseUrl: service.url, apiKey: 'cnk_secret_key' });
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    setTimeout(() => controller.abort(reason), 50);
    await expect(client.status('req_AbCdEfGhIjKlMnOpQrStUvWx', { signal: controller.signal })).rejects.toBe(
      reason,
    );
  });
});

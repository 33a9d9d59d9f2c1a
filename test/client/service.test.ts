import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import {
  createClient,
  type NotificationSent,
  NotifyClientError,
  type RequestCreated,
  type RequestStatus,
} from '../../client/index.js';
import { silentLogger } from '../../core/ports/logger.js';
import { type Standalone, startStandalone } from '../../examples/standalone/app.js';
import { readConfig } from '../../examples/standalone/config.js';
import { demoApiKey } from '../../examples/standalone/demo-seed.js';

interface InboxMessage {
  id: string;
  kind: 'plain' | 'interactive';
  text: string;
  selected: string | null;
}

let service: Standalone;
let base: string;
const servers: Server[] = [];

beforeEach(async () => {
  // A fresh service per test: its own rate-limit buckets and an empty inbox.
  // Through readConfig, so settings added to the host later take their defaults.
  const config = readConfig({ PORT: '0', HOST: '127.0.0.1', NOTIFY_STORAGE: 'memory', LOG_LEVEL: 'error' });
  service = await startStandalone(config, silentLogger);
  base = `http://127.0.0.1:${service.port}`;
});

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  await service.close();
});

async function inbox(email: string): Promise<InboxMessage[]> {
  const response = await fetch(`${base}/inbox/api/messages?email=${encodeURIComponent(email)}`);
  expect(response.status).toBe(200);
  return (await response.json()) as InboxMessage[];
}

async function click(email: string, value: string): Promise<void> {
  const message = (await inbox(email)).findLast((m) => m.kind === 'interactive');
  const response = await fetch(`${base}/inbox/api/messages/${message?.id}/click`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ value }),
  });
  expect(response.status).toBe(200);
}

/** Sleeps a tenth of what the client asks for, and records what it asked for. */
function fastSleep() {
  const requested: number[] = [];
  const sleep = (ms: number) => {
    requested.push(ms);
    return new Promise<void>((resolve) => setTimeout(resolve, ms / 10));
  };
  return { sleep, requested };
}

const approval = {
  user_emails: ['bob@acme.test', 'carol@acme.test'],
  message: 'Approve deploy of *v2.3*?',
  external_reference_id: 'deploy-42',
  response_request: {
    options: [
      { text: 'Approve', value: 'approve' },
      { text: 'Reject', value: 'reject' },
    ],
    timeout_minutes: 30,
  },
};

describe('the client against the standalone service', () => {
  it('sends plain and interactive notifications with typed results, and reads the status', async () => {
    const client = createClient({ baseUrl: base, apiKey: demoApiKey });

    const plain = await client.send({ user_emails: ['bob@acme.test'], message: 'Deploy of *v2.3* finished' });
    expectTypeOf(plain).toEqualTypeOf<NotificationSent>();
    expect(plain).toEqual({
      status: 'ok',
      notification_id: expect.stringMatching(/^notif_[A-Za-z0-9]{24}$/),
    });

    const interactive = await client.send(approval);
    expectTypeOf(interactive).toEqualTypeOf<RequestCreated>();
    expect(interactive).toEqual({ status: 'ok', request_id: expect.stringMatching(/^req_[A-Za-z0-9]{24}$/) });

    const status = await client.status(interactive.request_id);
    expectTypeOf(status).toEqualTypeOf<RequestStatus>();
    expect(status).toEqual({
      status: 'pending',
      external_reference_id: 'deploy-42',
      responses: [
        { user_email: 'bob@acme.test', option_value: null, timestamp: null, expired: false },
        { user_email: 'carol@acme.test', option_value: null, timestamp: null, expired: false },
      ],
    });
    expect((await inbox('bob@acme.test')).map((m) => m.kind)).toEqual(['plain', 'interactive']);
  });

  it('waitForCompletion resolves once every recipient has clicked', async () => {
    const client = createClient({ baseUrl: base, apiKey: demoApiKey });
    const { request_id: requestId } = await client.send(approval);

    let settled = false;
    const waiting = client
      .waitForCompletion(requestId, { initialIntervalMs: 50, maxIntervalMs: 200, timeoutMs: 10_000 })
      .finally(() => {
        settled = true;
      });
    waiting.catch(() => {}); // awaited below; don't report a rejection as unhandled meanwhile

    await click('bob@acme.test', 'approve');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(settled).toBe(false);
    await click('carol@acme.test', 'reject');

    const final = await waiting;
    expect(final).toMatchObject({
      status: 'finished',
      external_reference_id: 'deploy-42',
      responses: [
        { user_email: 'bob@acme.test', option_value: 'approve', expired: false },
        { user_email: 'carol@acme.test', option_value: 'reject', expired: false },
      ],
    });
    for (const response of final.responses) expect(response.timestamp).toMatch(/Z$/);
  });

  it('backs off on 429 and every send eventually succeeds', async () => {
    const { sleep, requested } = fastSleep();
    const client = createClient({ baseUrl: base, apiKey: demoApiKey, sleep, retry: { maxAttempts: 30 } });

    const results = await Promise.all(
      Array.from({ length: 13 }, (_, i) =>
        client.send({ user_emails: ['carol@acme.test'], message: `Message ${i}` }),
      ),
    );
    expect(new Set(results.map((r) => r.notification_id)).size).toBe(13);
    expect(requested.length).toBeGreaterThanOrEqual(3); // the per-key burst is 10
    for (const ms of requested) expect(ms).toBeGreaterThanOrEqual(1000);
    expect(await inbox('carol@acme.test')).toHaveLength(13);
  });

  it('retries a send whose answer was lost with the same Idempotency-Key and gets the replay', async () => {
    // A proxy that forwards every request, but drops the connection instead of answering the first one.
    const forwarded: {
      idempotencyKey: string | undefined;
      status: number;
      replayed: string | null;
      body: string;
    }[] = [];
    const proxy = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const headers: Record<string, string> = {};
      for (const name of ['content-type', 'x-api-key', 'idempotency-key', 'accept']) {
        const value = req.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      const upstream = await fetch(`${base}${req.url}`, {
        method: req.method ?? 'GET',
        headers,
        ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
      });
      const body = await upstream.text();
      forwarded.push({
        idempotencyKey: req.headers['idempotency-key'] as string | undefined,
        status: upstream.status,
        replayed: upstream.headers.get('idempotent-replayed'),
        body,
      });
      if (forwarded.length === 1) {
        req.socket.destroy(); // the send happened, but the client sees a network error
        return;
      }
      res.writeHead(upstream.status, {
        'content-type': upstream.headers.get('content-type') ?? 'text/plain',
      });
      res.end(body);
    });
    servers.push(proxy);
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxyBase = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

    const { sleep, requested } = fastSleep();
    const client = createClient({ baseUrl: proxyBase, apiKey: demoApiKey, sleep });
    const result = await client.send({ user_emails: ['bob@acme.test'], message: 'Exactly once, please' });

    expect(forwarded).toHaveLength(2);
    const [first, second] = forwarded;
    expect(first?.status).toBe(200);
    expect(first?.replayed).toBeNull();
    expect(second?.status).toBe(200);
    expect(second?.replayed).toBe('true');
    expect(first?.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(second?.idempotencyKey).toBe(first?.idempotencyKey);
    expect(requested).toHaveLength(1);
    expect(result.notification_id).toBe(
      (JSON.parse(first?.body ?? '{}') as NotificationSent).notification_id,
    );
    const messages = await inbox('bob@acme.test');
    expect(messages).toHaveLength(1);
    expect(messages[0]?.text).toBe('Exactly once, please');
  });

  it('reports error answers with status and details, without retrying them', async () => {
    let calls = 0;
    const countingFetch: typeof fetch = (input, init) => {
      calls += 1;
      return fetch(input, init);
    };
    const client = createClient({ baseUrl: base, apiKey: demoApiKey, fetch: countingFetch });

    const unknown = await client
      .send({ user_emails: ['bob@acme.test', 'nobody@acme.test'], message: 'hi' })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(NotifyClientError);
    expect(unknown).toMatchObject({ status: 422, details: 'Unknown user emails: nobody@acme.test' });
    expect(calls).toBe(1);

    calls = 0;
    const invalid = await client
      .send({ user_emails: ['bob@acme.test'], message: '   ' })
      .catch((e: unknown) => e);
    expect(invalid).toMatchObject({ status: 400, details: expect.stringContaining('message') });
    expect(calls).toBe(1);

    calls = 0;
    await expect(client.status('req_000000000000000000000000')).rejects.toMatchObject({
      status: 404,
      details: 'Request not found',
    });
    await expect(client.status('not-a-request')).rejects.toMatchObject({
      status: 400,
      details: 'Invalid request_id format',
    });
    expect(calls).toBe(2);

    calls = 0;
    const wrongKey = createClient({
      baseUrl: base,
      apiKey: 'cnk_not_a_real_key_00000000000000000000',
      fetch: countingFetch,
    });
    const denied = await wrongKey
      .send({ user_emails: ['bob@acme.test'], message: 'hi' })
      .catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(NotifyClientError);
    expect(denied).toMatchObject({ status: 401, details: 'Invalid API key' });
    expect((denied as Error).message).toBe('HTTP 401: Invalid API key');
    expect(calls).toBe(1);

    const refused = createClient({
      baseUrl: 'http://127.0.0.1:1',
      apiKey: demoApiKey,
      retry: { maxAttempts: 2 },
    });
    await expect(refused.status('req_000000000000000000000000')).rejects.toMatchObject({
      status: 0,
      details: expect.stringMatching(/^Network error/),
    });
    expect(await inbox('bob@acme.test')).toHaveLength(0);
  });
});

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import {
  PostOutcomeUnknownError,
  RateLimitedError,
  webApiFetch,
} from '../../adapters/chat/slack/web-api-fetch.js';

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

describe('webApiFetch: the Slack transport’s HTTP client', () => {
  let server: Server | undefined;

  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  /** A local server answering every request with `answer`, recording what it received. */
  async function serve(
    answer: (res: ServerResponse) => void,
  ): Promise<{ url: string; received: Received[] }> {
    const received: Received[] = [];
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        answer(res);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}/api/chat.postMessage`, received };
  }

  /** {@link serve}, answering its first request 429 with `Retry-After: 1` and the others 200. */
  function serveRateLimitedOnce(): ReturnType<typeof serve> {
    let answered = 0;
    return serve((res) => {
      answered += 1;
      if (answered === 1) res.writeHead(429, { 'retry-after': '1' }).end('{"ok":false}');
      else res.writeHead(200).end('{"ok":true}');
    });
  }

  it('posts the form with its headers and answers status, headers and body as fetch would', async () => {
    const { url, received } = await serve((res) => {
      res.setHeader('content-type', 'application/json; charset=utf-8');
      res.setHeader('retry-after', '7');
      res.setHeader('x-oauth-scopes', ['chat:write', 'users:read']);
      res.writeHead(200, 'OK').end('{"ok":true,"ts":"1.000001","text":"héllo"}');
    });
    const body = 'channel=D1&text=h%C3%A9llo';
    const response = await webApiFetch({ timeoutMs: 1000, maxRetryAfterMs: 60_000 })(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: 'Bearer xoxb-1' },
      body,
    });
    expect(received).toEqual([
      expect.objectContaining({
        method: 'POST',
        url: '/api/chat.postMessage',
        body,
        headers: expect.objectContaining({
          'content-type': 'application/x-www-form-urlencoded',
          authorization: 'Bearer xoxb-1',
          'content-length': String(Buffer.byteLength(body)),
        }),
      }),
    ]);
    expect(response).toMatchObject({ ok: true, status: 200, statusText: 'OK', url });
    expect(response.headers.get('Retry-After')).toBe('7');
    expect(response.headers.get('x-oauth-scopes')).toBe('chat:write, users:read');
    expect(response.headers.get('x-missing')).toBeNull();
    expect(Object.fromEntries(response.headers.entries())).toMatchObject({ 'retry-after': '7' });
    expect(await response.json()).toEqual({ ok: true, ts: '1.000001', text: 'héllo' });
    expect(new TextDecoder().decode(await response.arrayBuffer())).toContain('héllo');
  });

  it('answers an HTTP error as a response, not a rejection, so the client decides whether to retry', async () => {
    const { url } = await serve((res) => res.writeHead(503).end('{"ok":false}'));
    const response = await webApiFetch({ timeoutMs: 1000, maxRetryAfterMs: 60_000 })(url, {
      method: 'POST',
      body: '',
    });
    expect(response).toMatchObject({ ok: false, status: 503 });
    expect(await response.text()).toBe('{"ok":false}');
  });

  it('waits out a 429 for its Retry-After, no longer, and makes the call again', async () => {
    const { url, received } = await serveRateLimitedOnce();
    const told: [number, string][] = [];
    const started = performance.now();
    const response = await webApiFetch({
      timeoutMs: 1000,
      maxRetryAfterMs: 60_000,
      onRateLimited: (seconds, calledUrl) => told.push([seconds, calledUrl]),
    })(url, { method: 'POST', body: 'text=hi', headers: { authorization: 'Bearer xoxb-a' } });
    const waited = performance.now() - started;
    expect(response.status).toBe(200);
    expect(waited).toBeGreaterThanOrEqual(1000);
    expect(waited).toBeLessThan(1900);
    expect(received.map((call) => call.body)).toEqual(['text=hi', 'text=hi']);
    expect(told).toEqual([[1, url]]);
  });

  it('holds the other calls of the workspace while a 429 is waited out, not those of another', async () => {
    const { url, received } = await serveRateLimitedOnce();
    const fetch = webApiFetch({ timeoutMs: 1000, maxRetryAfterMs: 60_000 });
    const call = (token: string, body: string) =>
      fetch(url, { method: 'POST', body, headers: { Authorization: `Bearer ${token}` } });
    const first = call('xoxb-a', 'first');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = performance.now();
    const sameWorkspace = call('xoxb-a', 'same workspace');
    const otherWorkspace = await call('xoxb-b', 'other workspace');
    expect(otherWorkspace.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(500);
    expect((await sameWorkspace).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(700);
    expect((await first).status).toBe(200);
    const bodies = received.map((each) => each.body);
    expect(bodies.slice(0, 2)).toEqual(['first', 'other workspace']);
    expect(bodies.slice(2).sort()).toEqual(['first', 'same workspace']);
  });

  it('fails a call that Slack answers 429 again after every wait allowed, each of a second at least', async () => {
    const { url, received } = await serve((res) =>
      res.writeHead(429, { 'retry-after': '0' }).end('{"ok":false}'),
    );
    const started = performance.now();
    const call = webApiFetch({ timeoutMs: 1000, maxRetryAfterMs: 60_000, rateLimitRetries: 2 })(url, {
      method: 'POST',
      body: '',
    });
    await expect(call).rejects.toThrow(RateLimitedError);
    await expect(call).rejects.toThrow('Slack answered 429 again after 2 waits (retry.retries: 2)');
    expect(received).toHaveLength(3);
    // Retry-After: 0 is no reason to try again at once: each wait is a second, as the client's first retry.
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_950);
  });

  it('rejects a 429 whose Retry-After asks for longer than the longest wait, read as the client reads it', async () => {
    let retryAfter = '';
    const { url } = await serve((res) =>
      res.writeHead(429, { 'retry-after': retryAfter }).end('{"ok":false}'),
    );
    // The client waits `parseInt` of the header: each of these is an hour to it.
    for (const value of ['3600', '3600.0', '+3600', '3600s']) {
      retryAfter = value;
      const call = webApiFetch({ timeoutMs: 1000, maxRetryAfterMs: 60_000 })(url, {
        method: 'POST',
        body: '',
      });
      await expect(call).rejects.toThrow(RateLimitedError);
      await expect(call).rejects.toThrow('Slack answered 429 and asked to wait 3600 s');
    }
    // A date is no number to the client, which gives up on the 429 at once: it is answered as it is.
    retryAfter = new Date(Date.now() + 3_600_000).toUTCString();
    const dated = await webApiFetch({ timeoutMs: 1000, maxRetryAfterMs: 60_000 })(url, {
      method: 'POST',
      body: '',
    });
    expect(dated.status).toBe(429);
  });

  it('decodes a body a proxy compressed', async () => {
    const { url } = await serve((res) =>
      res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync('{"ok":true}')),
    );
    expect(
      await (
        await webApiFetch({ timeoutMs: 1000, maxRetryAfterMs: 60_000 })(url, { method: 'POST', body: '' })
      ).json(),
    ).toEqual({
      ok: true,
    });
  });

  it('rejects an answer that takes longer than its deadline (kept to within a second)', async () => {
    const { url } = await serve((res) => {
      setTimeout(() => res.writeHead(200).end('{"ok":true}'), 5000);
    });
    const started = performance.now();
    await expect(
      webApiFetch({ timeoutMs: 100, maxRetryAfterMs: 60_000 })(url, { method: 'POST', body: '' }),
    ).rejects.toThrow('Slack Web API call timed out after 100 ms');
    expect(performance.now() - started).toBeLessThan(2500);
  });

  it('rejects an answer whose body trickles in past its deadline, though no pause between bytes reaches it', async () => {
    const { url } = await serve((res) => {
      res.writeHead(200, { 'content-length': '40' });
      const drip = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(drip));
    });
    const started = performance.now();
    await expect(
      webApiFetch({ timeoutMs: 300, maxRetryAfterMs: 60_000 })(url, { method: 'POST', body: '' }),
    ).rejects.toThrow('Slack Web API call timed out after 300 ms');
    expect(performance.now() - started).toBeLessThan(1500);
  });

  it('gives up connecting to a host that never accepts at its deadline, as a call never sent', async () => {
    const { port, close } = await neverAccepting();
    const started = performance.now();
    try {
      const call = webApiFetch({ timeoutMs: 300, maxRetryAfterMs: 60_000 })(
        `http://127.0.0.1:${port}/api/chat.postMessage`,
        { method: 'POST', body: '' },
      );
      const failure: unknown = await call.catch((error: unknown) => error);
      expect(String(failure)).toContain('Slack Web API call timed out after 300 ms');
      // Nothing was sent, so the client may post it again.
      expect(failure).not.toBeInstanceOf(PostOutcomeUnknownError);
    } finally {
      close();
    }
    // undici's own connect timeout is 10 s.
    expect(performance.now() - started).toBeLessThan(2500);
  });

  it('rejects an answer cut short, so the client retries it as a network failure', async () => {
    const { url } = await serve((res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('{"ok":');
      setTimeout(() => res.destroy(), 10);
    });
    await expect(
      webApiFetch({ timeoutMs: 1000, maxRetryAfterMs: 60_000 })(url, { method: 'POST', body: '' }),
    ).rejects.toThrow();
  });

  it('drops the body of a redirect that trickles in, within the deadline', async () => {
    const { url } = await serve((res) => {
      res.writeHead(302, { location: '/elsewhere' });
      const drip = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(drip));
    });
    const started = performance.now();
    await expect(
      webApiFetch({ timeoutMs: 300, maxRetryAfterMs: 60_000 })(url, { method: 'POST', body: '' }),
    ).rejects.toThrow(/redirect \(302\)/);
    expect(performance.now() - started).toBeLessThan(1500);
  });

  it('rejects a redirect instead of following it', async () => {
    const { url, received } = await serve((res) => res.writeHead(302, { location: '/elsewhere' }).end());
    await expect(
      webApiFetch({ timeoutMs: 1000, maxRetryAfterMs: 60_000 })(url, {
        method: 'POST',
        body: '',
        redirect: 'error',
      }),
    ).rejects.toThrow(/redirect \(302\)/);
    expect(received).toHaveLength(1);
  });

  it('stops waiting when the caller aborts', async () => {
    const { url } = await serve((res) => {
      setTimeout(() => res.writeHead(200).end('{"ok":true}'), 300);
    });
    const controller = new AbortController();
    const call = webApiFetch({ timeoutMs: 0, maxRetryAfterMs: 60_000 })(url, {
      method: 'POST',
      body: '',
      signal: controller.signal,
    });
    controller.abort(new Error('gave up'));
    await expect(call).rejects.toThrow('gave up');
  });

  it('refuses a multipart body: the transport uploads no files', async () => {
    const { url, received } = await serve((res) => res.writeHead(200).end('{"ok":true}'));
    await expect(
      webApiFetch({ timeoutMs: 1000, maxRetryAfterMs: 60_000 })(url, {
        method: 'POST',
        body: new FormData(),
      }),
    ).rejects.toThrow(TypeError);
    expect(received).toEqual([]);
  });
});

/**
 * A port whose connections hang while connecting, as a host that drops them does: a process that
 * listens with a backlog of one and then blocks for 30 s at most (it outlives no test that dies),
 * never accepting, its queue filled by held connections. Linux drops connections beyond a full
 * queue; other systems may refuse them.
 */
async function neverAccepting(): Promise<{ port: number; close: () => void }> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const server = require('node:net').createServer();
       server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
         process.stdout.write(server.address().port + '\\n', () => {
           Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 30000);
           process.exit(0);
         });
       });`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let port: number;
  try {
    const [line] = (await once(child.stdout, 'data', { signal: AbortSignal.timeout(5000) })) as [Buffer];
    port = Number(line.toString('utf8').trim());
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const held: Socket[] = [];
  for (let n = 0; n < 8; n += 1) held.push(connect(port, '127.0.0.1').on('error', () => {}));
  await new Promise((resolve) => setTimeout(resolve, 200));
  return {
    port,
    close: () => {
      for (const socket of held) socket.destroy();
      child.kill('SIGKILL');
    },
  };
}

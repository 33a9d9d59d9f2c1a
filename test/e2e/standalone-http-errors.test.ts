import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxPipelinedRequests } from '../../examples/standalone/http-server.js';
import { type StandaloneProcess, startStandaloneProcess } from '../support/standalone-process.js';

let host: StandaloneProcess;

beforeAll(async () => {
  host = await startStandaloneProcess({
    NOTIFY_HEADERS_TIMEOUT_MS: '500',
    NOTIFY_REQUEST_TIMEOUT_MS: '1000',
  });
});

afterAll(async () => {
  await host?.stop();
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Everything the server sends on a fresh connection given `chunks`, written `pauseMs` apart, until
 * it closes the connection (at most 10 s).
 */
function rawText(chunks: string[], pauseMs = 0): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(host.port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('error', () => undefined);
    const limit = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within 10 s; got ${JSON.stringify(received)}`));
    }, 10_000);
    socket.on('close', () => {
      clearTimeout(limit);
      resolve(received);
    });
    const write = (index: number) => {
      if (index >= chunks.length || socket.destroyed) return;
      socket.write(chunks[index] ?? '');
      setTimeout(() => write(index + 1), pauseMs);
    };
    write(0);
  });
}

/** The first answer the server sends on a fresh connection given `chunks`, `pauseMs` apart. */
async function raw(chunks: string[], pauseMs = 0): Promise<RawAnswer> {
  const [head = '', body = ''] = (await rawText(chunks, pauseMs)).split('\r\n\r\n');
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

/** The demo organization's key, as the service printed it. */
const key = (): string => String(host.lines.find((line) => line.message === 'ready')?.demoApiKey);

function expectErrorShape(answer: RawAnswer, status: number, details: RegExp) {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
  const parsed = JSON.parse(answer.body) as { status: string; details: string };
  expect(parsed).toEqual({ status: 'error', details: expect.stringMatching(details) });
}

describe('errors of the HTTP parser, in the error shape', () => {
  it('431 for headers larger than the limit', async () => {
    const answer = await raw([`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`]);
    expectErrorShape(answer, 431, /header.*too large/i);
  });

  it('400 for a malformed Content-Length', async () => {
    const answer = await raw(['POST /api/notify HTTP/1.1\r\nHost: x\r\nContent-Length: 12abc\r\n\r\n']);
    expectErrorShape(answer, 400, /Content-Length/);
  });

  it('400 for a request line that is not HTTP', async () => {
    const answer = await raw(['HELLO THERE\r\n\r\n']);
    expectErrorShape(answer, 400, /malformed/i);
  });

  it('408 when the headers trickle in slower than NOTIFY_HEADERS_TIMEOUT_MS', async () => {
    const chunks = ['GET /healthz HTTP/1.1\r\n', ...Array.from({ length: 40 }, (_, i) => `X-${i}: y\r\n`)];
    const answer = await raw(chunks, 100);
    expectErrorShape(answer, 408, /time/i);
  });

  it('408 when the body trickles in slower than NOTIFY_REQUEST_TIMEOUT_MS', async () => {
    const head =
      'POST /api/notify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n';
    const answer = await raw([head, ...Array.from({ length: 40 }, () => ' ')], 100);
    expectErrorShape(answer, 408, /time/i);
  });

  it('417 for an Expect it does not support, and 400 for an HTTP/1.1 request without Host or with two', async () => {
    expectErrorShape(
      await raw(['GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: something\r\n\r\n']),
      417,
      /Expectation not supported: something/,
    );
    expectErrorShape(await raw(['GET /healthz HTTP/1.1\r\n\r\n']), 400, /Host header/);
    expectErrorShape(await raw(['GET /healthz HTTP/1.1\r\nHost:\r\n\r\n']), 400, /Host header/);
    expectErrorShape(
      await raw(['GET /healthz HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n']),
      400,
      /^Malformed HTTP request: Host must be sent once, not 2 times$/,
    );
    const http10 = await raw(['GET /healthz HTTP/1.0\r\n\r\n']);
    expect(http10.status).toBe(200);
  });

  it('refuses a key sent twice even behind more than 2,000 other headers', async () => {
    const filler = Array.from({ length: 2_100 }, (_, i) => `X-${i}: a\r\n`).join('');
    const answer = await raw([
      `GET /api/notify/status/req_000000000000000000000000 HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key()}\r\n${filler}X-API-Key: cnk_other\r\nConnection: close\r\n\r\n`,
    ]);
    expectErrorShape(answer, 400, /X-API-Key/);
  });

  it('answers a request parsed whole before bytes it cannot parse, then refuses those', async () => {
    const received = await rawText([
      `GET /api/notify/status/req_000000000000000000000000 HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key()}\r\n\r\nGARBAGE\r\n\r\n`,
    ]);
    expect(received).toMatch(/^HTTP\/1\.1 404 /);
    expect(received).toContain('Request not found');
    expect(received.indexOf('HTTP/1.1 400 ')).toBeGreaterThan(received.indexOf('Request not found'));
    expect(received).toContain('Malformed HTTP request');
  });

  it(`closes a connection that pipelines more than ${maxPipelinedRequests} requests, and serves on`, async () => {
    const read = `GET /api/notify/status/req_000000000000000000000000 HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key()}\r\n\r\n`;
    const received = await rawText([read.repeat(3 * maxPipelinedRequests)]);
    expect(received.split('HTTP/1.1 ').length - 1).toBeLessThanOrEqual(maxPipelinedRequests);
    const two = await rawText([read.repeat(2).replace(/\r\n\r\n$/, '\r\nConnection: close\r\n\r\n')]);
    expect(two.split('HTTP/1.1 ').length - 1).toBe(2);
    expect((await fetch(`${host.base}/healthz`)).status).toBe(200);
  });

  it('answers another method on /healthz with 405 and Allow: GET, HEAD, and HEAD like GET without a body', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS']) {
      const answer = await raw([`${method} /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`]);
      expectErrorShape(answer, 405, new RegExp(`^Method ${method} is not allowed here; use GET, HEAD$`));
      expect(answer.headers.allow).toBe('GET, HEAD');
    }
    const head = await rawText(['HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']);
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(head.endsWith('\r\n\r\n')).toBe(true);
  });

  it('answers CONNECT with 405 in the error shape, where Node would close the connection unanswered', async () => {
    for (const target of ['127.0.0.1:443', '/api/notify']) {
      const answer = await raw([`CONNECT ${target} HTTP/1.1\r\nHost: x\r\n\r\n`]);
      expectErrorShape(answer, 405, /^Method CONNECT is not allowed here: this service is not a proxy$/);
      expect(answer.headers.allow).toBe('GET, HEAD, POST');
    }
    expect((await fetch(`${host.base}/healthz`)).status).toBe(200);
  });

  it('answers a request before a CONNECT on its connection first, then refuses the CONNECT', async () => {
    const body = JSON.stringify({ user_emails: ['bob@acme.test'], message: 'Before the tunnel' });
    const send = `POST /api/notify HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key()}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const received = await rawText([`${send}CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n`]);
    const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
    // The send's own answer (200, or 429 once this file's other requests spent the key's burst).
    expect(statuses).toHaveLength(2);
    expect([200, 429]).toContain(statuses[0]);
    expect(statuses[1]).toBe(405);
  });

  it('serves a target in absolute form by its path, /healthz included', async () => {
    const health = await raw(['GET http://x/healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']);
    expect(health.status).toBe(200);
    // Answered by the status route itself: a path it did not reach would be named in a 404.
    const read = await raw([
      'GET https://x/api/notify/status/req_000000000000000000000000 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    ]);
    expectErrorShape(read, 401, /^Missing API key$/);
    expectErrorShape(
      await raw(['GET http://x/nowhere?q=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']),
      404,
      /^No endpoint at \/nowhere$/,
    );
  });

  it('keeps serving other clients', async () => {
    const answer = await fetch(`${host.base}/healthz`);
    expect(answer.status).toBe(200);
  });
});

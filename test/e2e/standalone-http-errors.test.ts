import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
 * Writes `chunks` on a fresh connection, `pauseMs` apart, and reads until the server closes it
 * (at most 10 s).
 */
function raw(chunks: string[], pauseMs = 0): Promise<RawAnswer> {
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
      const [head = '', body = ''] = received.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
    const write = (index: number) => {
      if (index >= chunks.length || socket.destroyed) return;
      socket.write(chunks[index] ?? '');
      setTimeout(() => write(index + 1), pauseMs);
    };
    write(0);
  });
}

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

  it('keeps serving other clients', async () => {
    const answer = await fetch(`${host.base}/healthz`);
    expect(answer.status).toBe(200);
  });
});

import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createHttpServer,
  type DrainableServer,
  maxPipelinedRequests,
} from '../../examples/standalone/http-server.js';

// The standalone service's HTTP server while it stops: what its drain waits for, and what it cuts.
let served: DrainableServer | undefined;
afterEach(() => {
  served?.server.closeAllConnections();
  served = undefined;
});

/** The standalone server with `listener`, started, and a way to open raw connections to it. */
async function serve(
  listener: Parameters<typeof createHttpServer>[0],
  options: Parameters<typeof createHttpServer>[1],
) {
  served = createHttpServer(listener, options);
  served.server.listen(0, '127.0.0.1');
  await once(served.server, 'listening');
  const { port } = served.server.address() as AddressInfo;
  const open = async (): Promise<{ socket: Socket; received: () => string }> => {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    await once(socket, 'connect');
    return { socket, received: () => text };
  };
  return { drain: served.drain, open };
}

/** A server that answers each request `answerMs` after its body arrived, and a raw connection to it. */
const serverAnswering = (answerMs: number, drainBodyGraceMs: number) =>
  serve(
    (request, response) => {
      request.resume();
      request.on('end', () => setTimeout(() => response.end(`answered ${request.url}`), answerMs));
    },
    { headersTimeoutMs: 5_000, requestTimeoutMs: 30_000, drainBodyGraceMs },
  );

const stalledPost = (path: string) => `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{`;

describe('the standalone server draining', () => {
  it('answers a whole request pipelined ahead of a stalled upload before it cuts the connection', async () => {
    const { drain, open } = await serverAnswering(800, 200);
    const { socket, received } = await open();
    socket.write(`POST /one HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}${stalledPost('/two')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    const drained = drain();
    await once(socket, 'close');
    expect(received()).toContain('answered /one');
    expect(performance.now() - started).toBeGreaterThanOrEqual(700);
    await drained;
  });

  it('cuts a stalled upload that began after the grace, not only those under way when it ended', async () => {
    const { drain, open } = await serverAnswering(1_500, 100);
    const slow = await open();
    const slowClosed = once(slow.socket, 'close');
    slow.socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    // Part of its headers when the stop begins: not idle, and no request yet.
    const late = await open();
    late.socket.write('POST /late HTTP/1.1\r\nHo');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const drained = drain();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const closed = once(late.socket, 'close');
    late.socket.write('st: x\r\nContent-Length: 100\r\n\r\n{');
    const started = performance.now();
    await closed;
    // Cut within a look or two, while the slow answer, a second away, still holds the stop.
    expect(performance.now() - started).toBeLessThan(900);
    await Promise.all([drained, slowClosed]);
    expect(slow.received()).toContain('answered /slow');
  });
});

/** The answers in what a connection received, by their status lines and `Connection` headers. */
const answersIn = (text: string) =>
  text
    .split('HTTP/1.1 ')
    .slice(1)
    .map((answer) => ({
      closes: /\r\nconnection: close\r\n/i.test(answer),
      body: answer.split('\r\n\r\n')[1],
    }));

const pipelined = (count: number) =>
  Array.from({ length: count }, (_, index) => `GET /${index} HTTP/1.1\r\nHost: x\r\n\r\n`).join('');

describe('the standalone server and pipelined requests', () => {
  it('answers every request a connection pipelined before the stop, the last answer closing it', async () => {
    const { drain, open } = await serverAnswering(200, 1_000);
    const { socket, received } = await open();
    socket.write(pipelined(20));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const drained = drain();
    await once(socket, 'close');
    await drained;
    const answers = answersIn(received());
    expect(answers.map((answer) => answer.body)).toEqual(
      Array.from({ length: 20 }, (_, index) => `answered /${index}`),
    );
    expect(answers.map((answer) => answer.closes)).toEqual([...Array(19).fill(false), true]);
  });

  it(`answers the ${maxPipelinedRequests} requests ahead of the one past the bound, then closes, running none after`, async () => {
    const { open } = await serverAnswering(100, 1_000);
    const { socket, received } = await open();
    socket.write(pipelined(maxPipelinedRequests + 5));
    await once(socket, 'close');
    expect(answersIn(received()).map((answer) => answer.body)).toEqual(
      Array.from({ length: maxPipelinedRequests }, (_, index) => `answered /${index}`),
    );
  });

  it('carries out no request pipelined behind an answer that closed the connection while it stops', async () => {
    const carriedOut: string[] = [];
    const { drain, open } = await serve(
      (request, response) => {
        request.resume();
        request.on('end', () => {
          carriedOut.push(request.url ?? '');
          setTimeout(() => response.end(`answered ${request.url}`), request.url === '/slow' ? 600 : 100);
        });
      },
      { headersTimeoutMs: 5_000, requestTimeoutMs: 30_000, drainBodyGraceMs: 5_000 },
    );
    const { socket, received } = await open();
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /fast HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const drained = drain();
    // /fast is answered, closing the connection, while it waits behind /slow; then more comes.
    await new Promise((resolve) => setTimeout(resolve, 250));
    socket.write('POST /notify HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}');
    await once(socket, 'close');
    await drained;
    expect(carriedOut).toEqual(['/slow', '/fast']);
    expect(answersIn(received()).map((answer) => answer.body)).toEqual(['answered /slow', 'answered /fast']);
  });

  it('closes at once a connection that goes on pipelining past twice the bound', async () => {
    const { open } = await serverAnswering(5_000, 1_000);
    const { socket, received } = await open();
    socket.write(pipelined(3 * maxPipelinedRequests));
    const started = performance.now();
    await once(socket, 'close');
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(received()).toBe('');
  });

  it('keeps the answer of a request answered before its body arrived for a client still sending when its time is up', async () => {
    const { open } = await serve(
      (_request, response) => {
        response.statusCode = 413;
        response.end('too big');
      },
      { headersTimeoutMs: 300, requestTimeoutMs: 600, drainBodyGraceMs: 1_000 },
    );
    const { socket, received } = await open();
    // A client that writes its whole body before it reads the answer.
    socket.pause();
    socket.write('POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n');
    const sending = setInterval(() => socket.writable && socket.write('x'.repeat(100)), 50);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    clearInterval(sending);
    socket.resume();
    await new Promise((resolve) => setTimeout(resolve, 300));
    socket.destroy();
    expect(answersIn(received()).map((answer) => answer.body)).toEqual(['too big']);
  });

  it('gives a request answered before its body arrived no second answer when its time is up', async () => {
    const { open } = await serve(
      (_request, response) => {
        response.statusCode = 404;
        response.end('not here');
      },
      { headersTimeoutMs: 300, requestTimeoutMs: 300, drainBodyGraceMs: 1_000 },
    );
    const { socket, received } = await open();
    socket.write(stalledPost('/unknown'));
    await once(socket, 'close');
    expect(answersIn(received()).map((answer) => answer.body)).toEqual(['not here']);
  });
});

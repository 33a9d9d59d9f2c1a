import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { errorResponse } from '../../core/adapter-kit.js';
import { answerParserErrors } from './parser-errors.js';
import { writeAnswer } from './write-answer.js';

/**
 * The most requests one connection may have waiting for their answers. Node parses every request a
 * client pipelines in one write before the first is answered, and an asynchronous answer holds its
 * request meanwhile: thousands in one write would hold memory without bound. Browsers do not
 * pipeline, and HTTP clients that do keep a few requests ahead; a connection past this is closed.
 */
export const maxPipelinedRequests = 64;

/** Whether an answer has gone out saying `Connection: close`: Node ends its connection after it. */
function closesConnection(response: ServerResponse | undefined): boolean {
  return response?.headersSent === true && String(response.getHeader('connection')).toLowerCase() === 'close';
}

/** How many `Host` lines a request has: one, or none in HTTP/1.0; RFC 9112 §3.2 refuses more. */
function hostLinesOf(rawHeaders: readonly string[]): number {
  let lines = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    if (rawHeaders[index]?.toLowerCase() === 'host') lines += 1;
  }
  return lines;
}

/** Once draining and past its grace, how often the connections of stalled uploads are looked for. */
const cutEveryMs = 250;

/** Options of {@link createHttpServer}. */
export interface HttpServerOptions {
  /** Longest time for a request's headers to arrive (ms); later, 408. */
  headersTimeoutMs: number;
  /** Longest time for a whole request, headers and body, to arrive (ms); later, 408. */
  requestTimeoutMs: number;
  /**
   * Once draining, how long a request whose body is still arriving may take to finish it (ms); then
   * its connection is closed. A stalled upload would otherwise hold the stop to the request timeout.
   */
  drainBodyGraceMs: number;
}

/** An HTTP server that can stop without cutting the requests it is answering. */
export interface DrainableServer {
  server: Server;
  /**
   * Stops accepting connections, closes the idle ones, lets the requests in flight finish (the last
   * answer of each connection carries `Connection: close`), then closes every connection left (one that sent nothing,
   * or only part of a request), and resolves when the last has closed. A request still receiving
   * its body after `drainBodyGraceMs` has its connection closed too.
   */
  drain(): Promise<void>;
}

/**
 * A Node HTTP server with request timeouts, parser errors in the error shape, a bound on pipelined
 * requests per connection, and draining.
 */
export function createHttpServer(listener: RequestListener, options: HttpServerOptions): DrainableServer {
  const server = createServer({
    headersTimeout: options.headersTimeoutMs,
    requestTimeout: options.requestTimeoutMs,
    // Node looks for expired requests every 30 s by default, far too seldom for short timeouts.
    connectionsCheckingInterval: Math.min(1_000, Math.max(10, Math.floor(options.headersTimeoutMs / 4))),
    // Checked below, so that the refusal comes in the error shape rather than as Node's empty 400.
    requireHostHeader: false,
  });
  // Every header line is seen: Node keeps the first 2,000 by default, and a repeated X-API-Key or
  // Idempotency-Key past them would go unnoticed. The 16 KiB limit on the headers still bounds them.
  server.maxHeadersCount = 0;
  const rawAnswers = answerParserErrors(server);
  // An `Expect` other than 100-continue: Node's own 417 has an empty body.
  server.on('checkExpectation', (request, response: ServerResponse) => {
    response.setHeader('connection', 'close');
    writeAnswer(response, errorResponse(417, `Expectation not supported: ${request.headers.expect ?? ''}`));
  });

  const inFlight = new Set<ServerResponse>();
  const waiting = new WeakMap<Socket, number>();
  /** The answer a connection's latest request waits for: the last one it is sent while draining. */
  const latest = new WeakMap<Socket, ServerResponse>();
  /** Connections past the bound: their requests ahead are answered, then they are closed. */
  const overflowed = new WeakSet<Socket>();
  /** How many requests came past the bound on each such connection. */
  const overflow = new WeakMap<Socket, number>();
  let draining = false;
  // While draining, only the last answer a connection waits for closes it: Node ends the connection
  // after an answer saying `Connection: close`, and the answers of requests pipelined behind it,
  // carried out all the same, would be lost.
  const closeAfter = (response: ServerResponse) => {
    const socket = response.req.socket;
    const before = latest.get(socket);
    if (before !== undefined && before !== response && !before.headersSent) before.removeHeader('connection');
    if (!response.headersSent) response.setHeader('connection', 'close');
  };
  // Once the last answer is out, nothing a connection may still send is waited for: an idle
  // connection, or one that sent part of a request, would otherwise hold the stop to its timeout.
  const closeWhenDone = () => {
    if (!draining || inFlight.size > 0) return;
    server.closeAllConnections();
    rawAnswers.closeTunnels();
  };
  /**
   * Closes the connections whose request is still receiving its body. Only the last request a
   * connection waits on can be: one ahead of it (pipelined) arrived whole and is being answered, and
   * its connection stays until that answer is out.
   */
  const cutStalledUploads = () => {
    for (const { req } of inFlight) {
      if (!req.complete && waiting.get(req.socket) === 1) req.socket.destroy();
    }
  };
  server.on('request', (request, response: ServerResponse) => {
    const socket = request.socket;
    if (overflowed.has(socket)) {
      // Node parses on whatever the client sends: past a second bound, the connection goes at once.
      const beyond = (overflow.get(socket) ?? 0) + 1;
      overflow.set(socket, beyond);
      if (beyond > maxPipelinedRequests) socket.destroy();
      return;
    }
    // An answer that closes the connection has gone out ahead (a stop, a refusal): Node ends the
    // connection after it, so a request pipelined behind it is not carried out, as its client,
    // told the connection closed, takes it to be.
    if (closesConnection(latest.get(socket))) return;
    const count = (waiting.get(socket) ?? 0) + 1;
    if (count > maxPipelinedRequests) {
      // Neither this request nor any behind it is carried out; those ahead, which may have sent a
      // notification, keep their answers, and the connection ends once they are out.
      overflowed.add(socket);
      return;
    }
    waiting.set(socket, count);
    inFlight.add(response);
    if (draining) closeAfter(response);
    latest.set(socket, response);
    response.on('close', () => {
      const left = (waiting.get(socket) ?? 1) - 1;
      waiting.set(socket, left);
      inFlight.delete(response);
      if (left === 0 && overflowed.has(socket)) socket.destroySoon();
      if (draining) setImmediate(closeWhenDone);
    });
    const hostLines = hostLinesOf(request.rawHeaders);
    const refusal =
      hostLines > 1
        ? `Malformed HTTP request: Host must be sent once, not ${hostLines} times`
        : !request.headers.host && request.httpVersionMajor === 1 && request.httpVersionMinor >= 1
          ? 'Malformed HTTP request: an HTTP/1.1 request needs a Host header'
          : null;
    if (refusal !== null) {
      response.setHeader('connection', 'close');
      writeAnswer(response, errorResponse(400, refusal));
      return;
    }
    listener(request, response);
  });

  return {
    server,
    drain: () =>
      new Promise<void>((resolve) => {
        draining = true;
        for (const response of inFlight)
          if (latest.get(response.req.socket) === response) closeAfter(response);
        // Once the grace is over, and again while requests are left, as one may have come since, or
        // a connection may have given the answer it was waiting for.
        let cutting: NodeJS.Timeout | undefined;
        const graceOver = setTimeout(() => {
          cutStalledUploads();
          cutting = setInterval(cutStalledUploads, cutEveryMs);
          cutting.unref();
        }, options.drainBodyGraceMs);
        graceOver.unref();
        server.close(() => {
          clearTimeout(graceOver);
          clearInterval(cutting);
          resolve();
        });
        server.closeIdleConnections();
        closeWhenDone();
      }),
  };
}

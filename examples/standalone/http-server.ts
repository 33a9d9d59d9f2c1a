import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { answerParserErrors } from './parser-errors.js';

/** Options of {@link createHttpServer}. */
export interface HttpServerOptions {
  /** Longest time for a request's headers to arrive (ms); later, 408. */
  headersTimeoutMs: number;
  /** Longest time for a whole request, headers and body, to arrive (ms); later, 408. */
  requestTimeoutMs: number;
}

/** An HTTP server that can stop without cutting the requests it is answering. */
export interface DrainableServer {
  server: Server;
  /**
   * Stops accepting connections, closes the idle ones, lets the requests in flight finish (their
   * answers carry `Connection: close`), and resolves when the last connection has closed.
   */
  drain(): Promise<void>;
}

/** A Node HTTP server with request timeouts, parser errors in the error shape, and draining. */
export function createHttpServer(listener: RequestListener, options: HttpServerOptions): DrainableServer {
  const server = createServer({
    headersTimeout: options.headersTimeoutMs,
    requestTimeout: options.requestTimeoutMs,
    // Node looks for expired requests every 30 s by default, far too seldom for short timeouts.
    connectionsCheckingInterval: Math.min(1_000, Math.max(10, Math.floor(options.headersTimeoutMs / 4))),
  });
  answerParserErrors(server);

  const inFlight = new Set<ServerResponse>();
  let draining = false;
  server.on('request', (request, response: ServerResponse) => {
    inFlight.add(response);
    if (draining) response.setHeader('connection', 'close');
    response.on('close', () => {
      inFlight.delete(response);
      // A keep-alive connection becomes idle only once its answer is out; without this it would
      // hold the drain until its keep-alive timeout.
      if (draining) setImmediate(() => server.closeIdleConnections());
    });
    listener(request, response);
  });

  return {
    server,
    drain: () =>
      new Promise<void>((resolve) => {
        draining = true;
        for (const response of inFlight) if (!response.headersSent) response.setHeader('connection', 'close');
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

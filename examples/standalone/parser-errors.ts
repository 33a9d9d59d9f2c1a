import { maxHeaderSize, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { errorResponse } from '../../core/adapter-kit.js';
import type { HttpResponse } from '../../core/index.js';

/** How long a connection answered on its raw socket may linger for the client to read the answer. */
const lingerMs = 5_000;

const reasons: Record<number, string> = {
  400: 'Bad Request',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  413: 'Content Too Large',
  431: 'Request Header Fields Too Large',
};

/** The answer to an error of Node's HTTP parser or of its request timeouts, in the error shape. */
export function parserErrorResponse(
  error: Error & { code?: string; reason?: string },
  server: Server,
): HttpResponse {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return errorResponse(431, `Request header fields too large (at most ${maxHeaderSize} bytes)`);
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return errorResponse(413, 'Chunk extensions too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return errorResponse(
        408,
        `Request timed out: the headers must arrive within ${server.headersTimeout} ms and the whole request within ${server.requestTimeout} ms`,
      );
    default:
      return errorResponse(400, `Malformed HTTP request: ${error.reason ?? error.message}`);
  }
}

/** An answer written on the raw socket, which closes after it. */
function serialize(response: HttpResponse): string {
  const headers = {
    ...response.headers,
    'content-length': String(Buffer.byteLength(response.body)),
    connection: 'close',
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  return `HTTP/1.1 ${response.status} ${reasons[response.status] ?? 'Error'}\r\n${lines.join('\r\n')}\r\n\r\n${response.body}`;
}

/** What {@link answerParserErrors} leaves to a drain. */
export interface RawAnswers {
  /** Destroys the connections of the CONNECT requests answered, which no longer are the server's. */
  closeTunnels(): void;
}

const connectRefusal = errorResponse(405, 'Method CONNECT is not allowed here: this service is not a proxy', {
  allow: 'GET, HEAD, POST',
});

/**
 * Answers the HTTP parser's own errors (431, 400 for a malformed request, 408 for a request too
 * slow) in the error shape instead of Node's empty bodies, then closes the connection; and a CONNECT,
 * which Node hands to the `connect` event alone and without a listener closes unanswered, with 405.
 */
export function answerParserErrors(server: Server): RawAnswers {
  // The answer goes on the raw socket, which is only right once the socket's current response is
  // complete: before, the bytes would come ahead of it or corrupt what the client is reading.
  const current = new WeakMap<Socket, ServerResponse>();
  const answered = new WeakSet<Socket>();
  const deferred = new WeakSet<Socket>();
  server.on('request', (request, response: ServerResponse) => current.set(request.socket, response));
  server.on('clientError', (error: Error & { code?: string }, socket: Socket) => {
    // The parser stays on the socket and reports again on whatever else arrives; reading it keeps
    // the answer from being lost to a reset, and the socket closes once the answer is out.
    if (answered.has(socket)) {
      // Until the answer in flight is out, closing would cut it; the refusal follows it.
      if (!deferred.has(socket)) socket.destroySoon();
      return;
    }
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    answered.add(socket);
    const answer = () => {
      socket.end(serialize(parserErrorResponse(error, server)));
      setTimeout(() => socket.destroy(), lingerMs).unref();
    };
    // A request parsed whole before the bad bytes is being answered: its answer goes out first (it
    // may have sent a notification, which a client told only "400" would send again), then this
    // one. A request still arriving (a body too slow, say) is the one refused: it gets no other.
    const pending = current.get(socket);
    // A request answered before its body was all in (a 413, a 404) has had its answer: a second
    // one would be read as the answer to the client's next request.
    if (pending?.writableFinished && !pending.req.complete) {
      // Ended, not destroyed: a client still sending would get a reset, which can take the answer
      // it was sent with it.
      socket.end();
      setTimeout(() => socket.destroy(), lingerMs).unref();
    } else if (pending === undefined || pending.writableFinished) answer();
    else if (!pending.req.complete) {
      if (pending.headersSent) socket.destroy();
      else answer();
    } else {
      deferred.add(socket);
      pending.once('close', () => {
        deferred.delete(socket);
        if (pending.writableFinished && socket.writable) answer();
        else socket.destroy();
      });
    }
  });

  // A CONNECT's socket is then ours: Node's error listener, timeouts and connection list let go of
  // it, so it is answered (after the answer of a request before it on the connection), read to its
  // end, destroyed after a while, and destroyed by a drain.
  const tunnels = new Set<Socket>();
  server.on('connect', (_request, socket: Socket) => {
    tunnels.add(socket);
    socket.on('error', () => socket.destroy());
    socket.on('close', () => tunnels.delete(socket));
    socket.resume();
    const answer = () => {
      socket.end(serialize(connectRefusal));
      setTimeout(() => socket.destroy(), lingerMs).unref();
    };
    const pending = current.get(socket);
    if (pending === undefined || pending.writableFinished) answer();
    else
      pending.once('close', () => {
        if (pending.writableFinished && socket.writable) answer();
        else socket.destroy();
      });
  });
  return {
    closeTunnels() {
      for (const socket of tunnels) socket.destroy();
    },
  };
}

import type { Logger } from '../ports/logger.js';
import { clientAddressResolver, forwardedProtoReader, type TrustProxy } from './client-address.js';
import { consumedBodyResponse } from './consumed-body.js';
import { toErrorResponse } from './error-response.js';
import { maxBodyBytes, readBody } from './read-body.js';
import { flattenHeaders, type IncomingHeaders } from './request-headers.js';
import { splitTarget } from './request-target.js';
import { createRouter } from './router.js';
import { type ServingGate, shuttingDownResponse } from './serving-gate.js';
import type { HttpRequest, HttpResponse, Route } from './types.js';

const noBody = new Uint8Array();

/** A request as a host hands it over: its framework's raw parts, with the body still unread. */
export interface IncomingHttpRequest {
  method: string;
  /**
   * Path and query exactly as received (`req.url`), relative to where the handler is mounted; or
   * the target in absolute form (`http://host/path?query`), whose path is then routed.
   */
  url: string;
  /**
   * The headers. Pass Node's `req.rawHeaders`, which keeps every line as sent (or values by name
   * with a list for a header sent twice, as `req.headersDistinct` has them): `req.headers` joins
   * most repeated headers into one value, so that the handler could not refuse two `X-API-Key` or
   * `Idempotency-Key` headers.
   */
  headers: IncomingHeaders;
  /** The raw body stream (a Node request is one), or null when there is none. */
  body: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string> | null;
  /**
   * True when the application's body parser already read the body. The handler then answers a 500
   * on the paths it serves (their signatures need the raw bytes) and passes on every other path.
   */
  bodyConsumed?: boolean;
  /**
   * The address of the peer of the connection (`req.socket.remoteAddress`), never a framework's
   * proxy-aware `req.ip`: the handler derives the client's address from it and `X-Forwarded-For`
   * as `trustProxy` says.
   */
  clientAddress: string;
  /**
   * Where the handler is mounted, without a trailing `/` (`/notifications`; Express's `req.baseUrl`);
   * empty or absent at the root. The OpenAPI document names it as its server.
   */
  mountPath?: string;
}

/**
 * The framework-neutral handler that every host wraps. It never throws. It answers null, without
 * touching the body, for a path it does not serve, so that an embedding application can go on.
 */
export type HttpHandler = (request: IncomingHttpRequest) => Promise<HttpResponse | null>;

/** Options of {@link createHttpHandler}. */
export interface HttpHandlerOptions {
  logger: Logger;
  /** The proxies trusted to report the client's address; none by default. */
  trustProxy?: TrustProxy;
  /** Counts the requests served on the routes, and refuses them with a 503 once it is closed. */
  gate?: ServingGate;
}

/**
 * No route reads the body of a GET or HEAD. One that announces a length within the limit is left
 * unread, which costs nothing (Node discards it after the answer); a longer or chunked one is read
 * up to the limit, so that the `413` the docs promise comes.
 */
const announcesShortBody = (headers: Readonly<Record<string, string | undefined>>): boolean => {
  const length = headers['content-length'];
  return (
    headers['transfer-encoding'] === undefined && (length === undefined || Number(length) <= maxBodyBytes)
  );
};

/**
 * Builds the handler over a set of routes: routing on the path as received, the body limit, the
 * client's address, and the error shape for everything.
 * @throws RangeError when `trustProxy` is invalid.
 */
export function createHttpHandler(routes: readonly Route[], options: HttpHandlerOptions): HttpHandler {
  const route = createRouter(routes);
  const clientAddressOf = clientAddressResolver(options.trustProxy);
  const forwardedProtoOf = forwardedProtoReader(options.trustProxy);
  const { gate } = options;
  return async (incoming) => {
    // Counted out in the step that answers: a stop waits for exactly the requests it let in.
    let leave: (() => void) | null = null;
    try {
      const target = splitTarget(incoming.url);
      if (!target) return null;
      const method = incoming.method.toUpperCase();
      const match = route(method, target.path);
      if (!match) return null;
      if ('refusal' in match) return match.refusal;
      // A GET or HEAD reads no body: a parser that marks every request parsed (Express 4's,
      // koa-bodyparser's) took nothing it needs.
      if (incoming.bodyConsumed && method !== 'GET' && method !== 'HEAD') return consumedBodyResponse();
      const headers = flattenHeaders(incoming.headers);
      const request: HttpRequest = {
        method,
        path: target.path,
        query: target.query,
        headers,
        // A status read announces no body: it is answered without an asynchronous step for one.
        body:
          method !== 'GET' && method !== 'HEAD'
            ? await readBody(incoming.body, headers['content-length'], match.route.maxBodyBytes)
            : announcesShortBody(headers)
              ? noBody
              : await readBody(incoming.body, headers['content-length']).then(() => noBody),
        clientAddress: clientAddressOf(incoming.clientAddress, headers['x-forwarded-for']),
      };
      if (incoming.mountPath) request.mountPath = incoming.mountPath;
      const proto = headers['x-forwarded-proto'];
      if (proto !== undefined) {
        const forwardedProto = forwardedProtoOf(incoming.clientAddress, headers['x-forwarded-for'], proto);
        if (forwardedProto !== undefined) request.forwardedProto = forwardedProto;
      }
      // Counted in once the body is read: a stop waits for work under way, never for a client
      // still sending (a request whose body ends after the stop began gets the 503).
      if (gate !== undefined) {
        leave = gate.enter();
        if (leave === null) return shuttingDownResponse();
      }
      return await match.route.handle(request, match.params);
    } catch (error) {
      return toErrorResponse(error, options.logger);
    } finally {
      leave?.();
    }
  };
}

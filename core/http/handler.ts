import type { Logger } from '../ports/logger.js';
import { toErrorResponse } from './error-response.js';
import { readBody } from './read-body.js';
import { createRouter } from './router.js';
import type { HttpResponse, Route } from './types.js';

/** A request as a host hands it over: its framework's raw parts, with the body still unread. */
export interface IncomingHttpRequest {
  method: string;
  /** Path and query, relative to where the handler is mounted. */
  url: string;
  /** Header values by lower-case name, as Node gives them. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The raw body stream (a Node request is one), or null when there is none. */
  body: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string> | null;
  clientAddress: string;
}

/**
 * The framework-neutral handler that every host wraps. It never throws. It answers null, without
 * touching the body, for a path it does not serve, so that an embedding application can go on.
 */
export type HttpHandler = (request: IncomingHttpRequest) => Promise<HttpResponse | null>;

function flattenHeaders(headers: IncomingHttpRequest['headers']): Record<string, string | undefined> {
  const flat: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers)) {
    flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

/** Builds the handler over a set of routes: body limit, routing, and the error shape for everything. */
export function createHttpHandler(routes: readonly Route[], logger: Logger): HttpHandler {
  const route = createRouter(routes);
  return async (incoming) => {
    try {
      const url = new URL(incoming.url, 'http://mount.invalid');
      const method = incoming.method.toUpperCase();
      const match = route(method, url.pathname);
      if (!match) return null;
      if ('refusal' in match) return match.refusal;
      const headers = flattenHeaders(incoming.headers);
      const body = await readBody(incoming.body, headers['content-length']);
      const request = {
        method,
        path: url.pathname,
        query: url.searchParams,
        headers,
        body,
        clientAddress: incoming.clientAddress,
      };
      return await match.route.handle(request, match.params);
    } catch (error) {
      return toErrorResponse(error, logger);
    }
  };
}

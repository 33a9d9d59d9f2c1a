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
  body: AsyncIterable<Uint8Array | string> | null;
  clientAddress: string;
}

/** The framework-neutral handler that every host wraps. It never throws. */
export type HttpHandler = (request: IncomingHttpRequest) => Promise<HttpResponse>;

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
      const headers = flattenHeaders(incoming.headers);
      const url = new URL(incoming.url, 'http://mount.invalid');
      const body = await readBody(incoming.body, headers['content-length']);
      return await route({
        method: incoming.method.toUpperCase(),
        path: url.pathname,
        query: url.searchParams,
        headers,
        body,
        clientAddress: incoming.clientAddress,
      });
    } catch (error) {
      return toErrorResponse(error, logger);
    }
  };
}

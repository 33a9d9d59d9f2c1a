import type { Middleware } from 'koa';
import type { HttpHandler } from '../../core/http/handler.js';
import { consumedBodyResponse } from '../shared/consumed-body.js';

/** What the Koa host needs of a notifier. */
export interface KoaNotifier {
  handle: HttpHandler;
}

/** Options of {@link notifyMiddleware}. */
export interface KoaNotifyOptions {
  /** Path under which the API is served, e.g. `/notifications`; the root by default. */
  prefix?: string;
}

/**
 * Koa middleware serving the API (and the routes of every transport, such as the inbox) under
 * `prefix`. Use it before any body parser. Paths it does not serve go on to the next middleware.
 */
export function notifyMiddleware(notifier: KoaNotifier, options: KoaNotifyOptions = {}): Middleware {
  const prefix = (options.prefix ?? '').replace(/\/+$/, '');
  return async (ctx, next) => {
    const inside = ctx.path === prefix || ctx.path.startsWith(`${prefix}/`);
    if (!inside) return next();
    const parsed = (ctx.request as { body?: unknown }).body !== undefined || ctx.req.readableEnded;
    const response = parsed
      ? consumedBodyResponse()
      : await notifier.handle({
          method: ctx.method,
          url: ctx.url.slice(prefix.length) || '/',
          headers: ctx.req.headers,
          body: ctx.req,
          clientAddress: ctx.ip,
        });
    if (!response) return next();
    ctx.status = response.status;
    ctx.set(response.headers);
    ctx.body = response.body;
  };
}

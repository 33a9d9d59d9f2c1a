import type { Middleware } from 'koa';
import { checkServed } from '../../core/adapter-kit.js';
import { type HttpHandler, originForm } from '../../core/index.js';

/** What the Koa host needs of a notifier. */
export interface KoaNotifier {
  handle: HttpHandler;
}

/** Options of {@link notifyMiddleware}. */
export interface KoaNotifyOptions {
  /** Path under which the API is served, e.g. `/notifications` (it starts with `/`); the root by default. */
  prefix?: string;
}

/**
 * Koa middleware serving the API (and the routes of every transport, such as the inbox) under
 * `prefix`. Use it before any body parser. Paths it does not serve go on to the next middleware.
 * The client's address is the socket's, or what `trustProxy` of the notifier trusts; Koa's
 * `app.proxy` plays no part.
 */
export function notifyMiddleware(notifier: KoaNotifier, options: KoaNotifyOptions = {}): Middleware {
  checkServed('notifyMiddleware', notifier);
  if (options.prefix !== undefined && typeof options.prefix !== 'string') {
    throw new TypeError(
      `notifyMiddleware: prefix must be a path such as "/notifications", got ${typeof options.prefix}`,
    );
  }
  const prefix = (options.prefix ?? '').replace(/\/+$/, '');
  if (prefix !== '' && !prefix.startsWith('/')) {
    throw new RangeError(
      `notifyMiddleware: prefix must start with "/", got ${JSON.stringify(options.prefix)}`,
    );
  }
  return async (ctx, next) => {
    // The target as received, as the handler routes it (`ctx.path` is parsed): the prefix, then
    // nothing, a path or a query.
    const target = originForm(ctx.url);
    const rest = target.slice(prefix.length);
    if (!target.startsWith(prefix) || !/^(?:[/?]|$)/.test(rest)) return next();
    const response = await notifier.handle({
      method: ctx.method,
      url: rest.startsWith('/') ? rest : `/${rest}`,
      headers: ctx.req.rawHeaders,
      body: ctx.req,
      bodyConsumed: (ctx.request as { body?: unknown }).body !== undefined || ctx.req.readableEnded,
      clientAddress: ctx.req.socket.remoteAddress ?? '',
      mountPath: prefix,
    });
    if (!response) return next();
    ctx.status = response.status;
    ctx.set(response.headers);
    ctx.body = response.body;
  };
}

import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { checkServed } from '../../core/adapter-kit.js';
import type { HttpHandler, HttpResponse } from '../../core/index.js';

/** What the Express host needs of a notifier. */
export interface ExpressNotifier {
  handle: HttpHandler;
}

function send(res: Response, response: HttpResponse): void {
  // The length is set, not left to Node: Node leaves it out of a HEAD's answer, and out of every
  // answer to an HTTP/1.0 client, which then learns the end of the body only from the closing.
  res
    .status(response.status)
    .set(response.headers)
    .set('content-length', String(Buffer.byteLength(response.body)));
  res.end(response.body);
}

/**
 * Express middleware serving the API (and the routes of every transport, such as the inbox) under
 * wherever it is mounted: `app.use('/notifications', notifyRouter(notifier))`. Mount it before any
 * body parser. Paths it does not serve go on to the next middleware. The client's address is the
 * socket's, or what `trustProxy` of the notifier trusts; Express's `trust proxy` plays no part.
 * Express matches the mount path regardless of case unless the application sets
 * `case sensitive routing` before mounting; the paths under it are matched exactly as sent.
 */
export function notifyRouter(notifier: ExpressNotifier): RequestHandler {
  checkServed('notifyRouter', notifier);
  return (req: Request, res: Response, next: NextFunction) => {
    notifier
      .handle({
        method: req.method,
        url: req.url,
        headers: req.rawHeaders,
        body: req,
        bodyConsumed: req.body !== undefined || req.readableEnded,
        clientAddress: req.socket.remoteAddress ?? '',
        mountPath: req.baseUrl,
      })
      .then((response) => {
        if (!response) return next();
        // Another middleware answered first (a request timeout while a platform was slow): this
        // answer reaches nobody, and writing it would throw where no one catches it.
        if (res.headersSent) return;
        send(res, response);
      })
      .catch(next);
  };
}

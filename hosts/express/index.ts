import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { HttpHandler, HttpResponse } from '../../core/index.js';

/** What the Express host needs of a notifier. */
export interface ExpressNotifier {
  handle: HttpHandler;
}

function send(req: Request, res: Response, response: HttpResponse): void {
  res.status(response.status).set(response.headers);
  // Node counts the body it sends; it leaves a HEAD's out, and its length with it.
  if (req.method === 'HEAD') res.set('content-length', String(Buffer.byteLength(response.body)));
  res.end(response.body);
}

/**
 * Express middleware serving the API (and the routes of every transport, such as the inbox) under
 * wherever it is mounted: `app.use('/notifications', notifyRouter(notifier))`. Mount it before any
 * body parser. Paths it does not serve go on to the next middleware. The client's address is the
 * socket's, or what `trustProxy` of the notifier trusts; Express's `trust proxy` plays no part.
 */
export function notifyRouter(notifier: ExpressNotifier): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    notifier
      .handle({
        method: req.method,
        url: req.url,
        headers: req.rawHeaders,
        body: req,
        bodyConsumed: req.body !== undefined || req.readableEnded,
        clientAddress: req.socket.remoteAddress ?? '',
      })
      .then((response) => (response ? send(req, res, response) : next()), next);
  };
}

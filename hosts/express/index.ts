import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { HttpHandler } from '../../core/http/handler.js';
import type { HttpResponse } from '../../core/http/types.js';
import { consumedBodyResponse } from '../shared/consumed-body.js';

/** What the Express host needs of a notifier. */
export interface ExpressNotifier {
  handle: HttpHandler;
}

function send(res: Response, response: HttpResponse): void {
  res.status(response.status).set(response.headers).end(response.body);
}

/**
 * Express middleware serving the API (and the routes of every transport, such as the inbox) under
 * wherever it is mounted: `app.use('/notifications', notifyRouter(notifier))`. Mount it before any
 * body parser. Paths it does not serve go on to the next middleware.
 */
export function notifyRouter(notifier: ExpressNotifier): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.body !== undefined || req.readableEnded) {
      send(res, consumedBodyResponse());
      return;
    }
    notifier
      .handle({
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: req,
        clientAddress: req.ip ?? req.socket.remoteAddress ?? 'unknown',
      })
      .then((response) => (response ? send(res, response) : next()), next);
  };
}

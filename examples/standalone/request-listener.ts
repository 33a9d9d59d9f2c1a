import type { IncomingMessage, RequestListener } from 'node:http';
import { errorResponse, jsonResponse } from '../../core/adapter-kit.js';
import {
  type HttpHandler,
  type HttpResponse,
  type IncomingHttpRequest,
  type Logger,
  originForm,
} from '../../core/index.js';
import { writeAnswer } from './write-answer.js';

/**
 * Where the service stands: once storage answers, the handlers it serves (the notifier's, the
 * account pages'), and until then why it is not ready.
 */
export interface Readiness {
  handlers?: readonly HttpHandler[];
  /** Why storage is not ready yet, for `/healthz`. */
  reason: string;
}

/**
 * The path as received, as the handlers route it: not resolved, so that `/api/x/../notify` is named
 * as sent rather than as the endpoint it did not reach; a target in absolute form by its path.
 */
function pathOf(req: IncomingMessage): string {
  const target = originForm(req.url ?? '/');
  const mark = target.indexOf('?');
  return mark === -1 ? target : target.slice(0, mark);
}

/** The answer of the first handler that serves the path; a handler that does not leaves the body unread. */
async function firstAnswer(
  handlers: readonly HttpHandler[],
  request: IncomingHttpRequest,
): Promise<HttpResponse | null> {
  for (const handle of handlers) {
    const response = await handle(request);
    if (response) return response;
  }
  return null;
}

/**
 * Serves `/healthz` (200 once ready; until then 503 with the reason), the handlers' routes at the
 * root (503 until ready, so that callers never wait on storage), and 404 elsewhere, every error in
 * the error shape.
 */
export function requestListener(readiness: Readiness, logger: Logger): RequestListener {
  return (req, res) => {
    const { handlers } = readiness;
    if (pathOf(req) === '/healthz') {
      const method = req.method ?? 'GET';
      writeAnswer(
        res,
        method !== 'GET' && method !== 'HEAD'
          ? errorResponse(405, `Method ${method} is not allowed here; use GET, HEAD`, { allow: 'GET, HEAD' })
          : handlers
            ? jsonResponse(200, { status: 'ok' })
            : errorResponse(503, `Storage is not ready: ${readiness.reason}`, { 'retry-after': '1' }),
      );
      return;
    }
    if (!handlers) {
      writeAnswer(res, errorResponse(503, 'Storage is temporarily unavailable', { 'retry-after': '1' }));
      return;
    }
    firstAnswer(handlers, {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: req.rawHeaders,
      body: req,
      clientAddress: req.socket.remoteAddress ?? '',
    }).then(
      (response) => writeAnswer(res, response ?? errorResponse(404, `No endpoint at ${pathOf(req)}`)),
      (error: unknown) => {
        logger.error('unexpected error', { error: String(error) });
        writeAnswer(res, errorResponse(500, 'Internal server error'));
      },
    );
  };
}

import type { ServerResponse } from 'node:http';
import type { HttpResponse } from '../../core/index.js';

/** Writes an answer whole, with its length: `writeHead` fixes the headers, so Node would chunk it. */
export function writeAnswer(response: ServerResponse, answer: HttpResponse): void {
  response
    .writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(answer.body) })
    .end(answer.body);
}

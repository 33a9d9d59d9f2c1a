import type { HttpResponse } from './types.js';

const jsonType = 'application/json; charset=utf-8';

/** A JSON answer. */
export function jsonResponse(status: number, body: unknown, headers?: Record<string, string>): HttpResponse {
  return {
    status,
    headers: headers === undefined ? { 'content-type': jsonType } : { 'content-type': jsonType, ...headers },
    body: JSON.stringify(body),
  };
}

/** An error answer in the specification's shape: `{"status":"error","details":…}`. */
export function errorResponse(
  status: number,
  details: string,
  headers?: Record<string, string>,
): HttpResponse {
  return jsonResponse(status, { status: 'error', details }, headers);
}

/** An HTML page. */
export function htmlResponse(
  status: number,
  html: string,
  headers: Record<string, string> = {},
): HttpResponse {
  return { status, headers: { 'content-type': 'text/html; charset=utf-8', ...headers }, body: html };
}

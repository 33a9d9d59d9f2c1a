import type { HttpResponse } from './types.js';

const jsonType = 'application/json; charset=utf-8';

/** A JSON answer whose body is JSON text already. */
export function jsonTextResponse(
  status: number,
  json: string,
  headers?: Record<string, string>,
): HttpResponse {
  return {
    status,
    headers: headers === undefined ? { 'content-type': jsonType } : { 'content-type': jsonType, ...headers },
    body: json,
  };
}

/** A JSON answer. */
export function jsonResponse(status: number, body: unknown, headers?: Record<string, string>): HttpResponse {
  return jsonTextResponse(status, JSON.stringify(body), headers);
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

import { parseHttpDate } from './http-date.js';

/**
 * A `Retry-After` header (delay-seconds or an HTTP-date) in milliseconds from `now`, or null when
 * absent or unreadable; a date in the past is 0. A huge value is answered as it is: the retry
 * schedule caps it.
 */
export function parseRetryAfter(header: string | string[] | undefined, now: number): number | null {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (value === undefined || value === '') return null;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = parseHttpDate(value, now);
  return date === null ? null : Math.max(0, date - now);
}

import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../adapters/callbacks/retry-after.js';

const now = Date.parse('2026-03-01T10:00:00.000Z');

describe('Retry-After of a callback receiver', () => {
  it.each([
    ['120', 120_000],
    ['0', 0],
    [' 30 ', 30_000],
    ['99999999999999', 99_999_999_999_999_000],
    // The three HTTP-date forms of RFC 9110, 90 seconds after now.
    ['Sun, 01 Mar 2026 10:01:30 GMT', 90_000],
    ['Sunday, 01-Mar-26 10:01:30 GMT', 90_000],
    ['Sun Mar  1 10:01:30 2026', 90_000],
    ['Fri, 31 Dec 9999 23:59:59 GMT', Date.UTC(9999, 11, 31, 23, 59, 59) - now],
    ['Thu, 01 Jan 1970 00:00:00 GMT', 0],
    ['Sun, 01 Mar 2026 09:59:59 GMT', 0],
  ])('reads %j as %d ms', (header, ms) => {
    expect(parseRetryAfter(header, now)).toBe(ms);
  });

  it('reads the first of repeated headers', () => {
    expect(parseRetryAfter(['5', '3600'], now)).toBe(5_000);
  });

  it.each([
    undefined,
    '',
    '   ',
    'soon',
    '-5',
    '1.5',
    '3600.5',
    '1e5',
    '0x10',
    'abc 2',
    '2026-03-01T10:01:30Z',
    'Sun, 31 Feb 2026 10:01:30 GMT',
    'Sun, 01 Mar 2026 25:01:30 GMT',
    'Sun, 01 Mar 2026 10:01:30 PST',
    'Sun, 01 Mar 2026 10:01:30 GMT and more',
  ])('ignores %j', (header) => {
    expect(parseRetryAfter(header, now)).toBeNull();
  });
});

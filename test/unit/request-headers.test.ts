import { describe, expect, it } from 'vitest';
import { isNotifyError } from '../../core/errors.js';
import { flattenHeaders, type HeaderRecord } from '../../core/http/request-headers.js';

/** The same request's headers as Node's `rawHeaders` and as its `headersDistinct` would hold them. */
const bothForms = (raw: string[]): [string, readonly string[] | HeaderRecord][] => {
  const distinct: Record<string, string[]> = {};
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = (raw[index] ?? '').toLowerCase();
    distinct[name] = [...(Object.hasOwn(distinct, name) ? (distinct[name] ?? []) : []), raw[index + 1] ?? ''];
  }
  return [
    ['raw list', raw],
    ['values by name', distinct],
  ];
};

const refusal = (run: () => unknown): string | null => {
  try {
    run();
    return null;
  } catch (error) {
    if (!isNotifyError(error, 'invalid_request')) throw error;
    return error.details;
  }
};

describe('flattenHeaders', () => {
  it.each(bothForms(['Host', 'a.test', 'X-API-Key', 'cnk_1', 'Content-Type', 'application/json']))(
    'gives one value per lower-case name (%s)',
    (_form, headers) => {
      expect(flattenHeaders(headers)).toEqual({
        host: 'a.test',
        'x-api-key': 'cnk_1',
        'content-type': 'application/json',
      });
    },
  );

  it.each(bothForms(['Accept', 'text/html', 'accept', 'application/json', 'ACCEPT', '*/*']))(
    'joins the lines of a repeated header, whatever their case, in order (%s)',
    (_form, headers) => {
      expect(flattenHeaders(headers)).toEqual({ accept: 'text/html, application/json, */*' });
    },
  );

  it.each(bothForms(['Cookie', 'anchor=a1', 'cookie', 'session=s1; theme=dark']))(
    'joins the lines of a repeated Cookie header as one Cookie header lists its pairs (%s)',
    (_form, headers) => {
      expect(flattenHeaders(headers)).toEqual({ cookie: 'anchor=a1; session=s1; theme=dark' });
    },
  );

  it.each([
    ...bothForms(['X-API-Key', 'cnk_1', 'x-api-key', 'cnk_1']),
    ...bothForms(['idempotency-key', 'a', 'Idempotency-Key', 'b', 'IDEMPOTENCY-KEY', 'c']),
  ])('refuses a single-valued header sent more than once, whatever its case (%s)', (_form, headers) => {
    expect(refusal(() => flattenHeaders(headers))).toMatch(
      /^(X-API-Key|Idempotency-Key): must be sent once, not [23] times$/,
    );
  });

  it.each(bothForms(['Constructor', '1', '__proto__', '2', 'constructor', '3', 'X-API-Key', 'cnk_1']))(
    "takes headers named like an object's members as any other, without touching its prototype (%s)",
    (_form, headers) => {
      const flat = flattenHeaders(headers);
      expect(flat.constructor).toBe('1, 3');
      expect(flat['x-api-key']).toBe('cnk_1');
      expect(Object.getPrototypeOf(flat)).toBe(Object.prototype);
    },
  );

  it('ignores a name without a value at the end of a raw list', () => {
    expect(flattenHeaders(['X-API-Key', 'cnk_1', 'Accept'])).toEqual({ 'x-api-key': 'cnk_1' });
  });
});

import { NotifyError } from '../errors.js';

/** Header values by lower-case name; a list holds the values of a header sent more than once. */
export type IncomingHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * Headers that a request may carry once only, by lower-case name, with the spelling errors use.
 * Joined, two of them would make one value that no caller sent (two idempotency keys, one key).
 */
const singleValued: Readonly<Record<string, string>> = {
  'x-api-key': 'X-API-Key',
  'idempotency-key': 'Idempotency-Key',
};

/**
 * One value per header, by lower-case name: the values of a repeated header joined with `, ` (the
 * list syntax of HTTP), except for the single-valued headers, whose repetition is refused.
 * @throws NotifyError `invalid_request` when a single-valued header is repeated.
 */
export function flattenHeaders(headers: IncomingHeaders): Record<string, string | undefined> {
  const flat: Record<string, string | undefined> = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    // Node's names are lower case already; another caller's may meet under one name only here.
    const known = flat[lower];
    if (typeof value === 'string' && known === undefined) {
      flat[lower] = value;
      continue;
    }
    const values = typeof value === 'string' ? [value] : value;
    const all = known === undefined ? values : [known, ...values];
    const spelling = singleValued[lower];
    if (spelling !== undefined && all.length > 1) {
      throw new NotifyError('invalid_request', `${spelling}: must be sent once, not ${all.length} times`);
    }
    flat[lower] = all.length === 1 ? all[0] : all.join(', ');
  }
  return flat;
}

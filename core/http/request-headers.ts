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
  const values = new Map<string, string[]>();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    values.set(lower, [...(values.get(lower) ?? []), ...(typeof value === 'string' ? [value] : value)]);
  }
  const flat: Record<string, string | undefined> = {};
  for (const [name, list] of values) {
    const spelling = singleValued[name];
    if (spelling !== undefined && list.length > 1) {
      throw new NotifyError('invalid_request', `${spelling}: must be sent once, not ${list.length} times`);
    }
    flat[name] = list.join(', ');
  }
  return flat;
}

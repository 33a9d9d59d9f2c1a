/** Parsers of Redis replies: the stores trust their own data, but a wrong shape must fail loudly. */

const unexpected = (what: string, reply: unknown): Error =>
  new Error(`Unexpected Redis reply: expected ${what}, got ${JSON.stringify(reply)}`);

/** A bulk string reply. */
export function asString(reply: unknown): string {
  if (typeof reply !== 'string') throw unexpected('a string', reply);
  return reply;
}

/** A bulk string reply, or null for a nil reply. */
export function asOptionalString(reply: unknown): string | null {
  return reply === null || reply === undefined ? null : asString(reply);
}

/** An integer reply. */
export function asNumber(reply: unknown): number {
  if (typeof reply !== 'number') throw unexpected('an integer', reply);
  return reply;
}

/** An array reply. */
export function asArray(reply: unknown): unknown[] {
  if (!Array.isArray(reply)) throw unexpected('an array', reply);
  return reply;
}

/** A stored number (scores, timestamps kept as strings), or null when absent. */
export function asOptionalNumber(reply: unknown): number | null {
  const text = asOptionalString(reply);
  return text === null ? null : Number(text);
}

/** Splits a flat array reply into tuples of `size` entries. */
export function chunks(reply: unknown, size: number): unknown[][] {
  const flat = asArray(reply);
  if (flat.length % size !== 0) throw unexpected(`a multiple of ${size} entries`, reply);
  const tuples: unknown[][] = [];
  for (let i = 0; i < flat.length; i += size) tuples.push(flat.slice(i, i + size));
  return tuples;
}

/** Parses a JSON record the adapter stored itself. */
export function parseJson<T>(reply: unknown): T {
  return JSON.parse(asString(reply)) as T;
}

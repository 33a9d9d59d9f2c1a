/** Most values an interner keeps; past it, it starts over (values already shared stay shared). */
const capacity = 4096;

/**
 * Shares one copy of values that many stored records repeat (recipients' addresses, option labels,
 * the sender): a pending request would otherwise keep its own copy of every string it was parsed
 * with. Bounded: when full it forgets everything and starts again, so it never holds more than
 * `capacity` values, whichever records come and go. Values given to it must never be mutated.
 */
export interface Interner<T> {
  /** The shared value stored under `key`, or `value` (then shared under it). */
  intern(key: string, value: T): T;
  /** The shared value stored under `key`, or what `make` builds (then shared under it). */
  internWith(key: string, make: () => T): T;
}

/** Creates an empty {@link Interner}. */
export function createInterner<T>(): Interner<T> {
  const values = new Map<string, T>();
  const keep = (key: string, value: T): T => {
    if (values.size >= capacity) values.clear();
    values.set(key, value);
    return value;
  };
  return {
    intern: (key, value) => values.get(key) ?? keep(key, value),
    internWith: (key, make) => values.get(key) ?? keep(key, make()),
  };
}

/**
 * Refuses, at creation, an option that must be an object with some methods (a clock, a logger),
 * when it is given but lacks one: from plain JavaScript it would otherwise fail as a property read
 * at its first use. `owner` prefixes the message (`'accountPages: '`), `what` says what it must have.
 */
export function checkMethodsOption(
  owner: string,
  name: string,
  given: unknown,
  methods: readonly string[],
  what: string,
): void {
  if (given == null) return;
  const object = given as Record<string, unknown>;
  // A function may carry the methods too (anylogger's and roarr's loggers are called as well).
  const holder = typeof given === 'object' || typeof given === 'function';
  if (!holder || !methods.every((method) => typeof object[method] === 'function')) {
    throw new TypeError(`${owner}${name} must have ${what}`);
  }
}

/** What a clock option must have. */
export const clockMethods = [['now'], 'now() answering milliseconds since the epoch'] as const;

/** What a logger option must have. */
export const loggerMethods = [
  ['debug', 'info', 'warn', 'error'],
  'debug, info, warn and error methods (console has them)',
] as const;

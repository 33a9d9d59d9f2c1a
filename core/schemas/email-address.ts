import { z } from 'zod';

/** Zod's address syntax, without its anchors. */
const syntax = z.regexes.email.source.slice(1, -1);

/**
 * The lengths of RFC 5321 that zod's syntax leaves unchecked: at most 254 characters in all (a path of
 * 256 less its brackets), 64 before the `@`, and 63 in each label of the domain. The syntax admits
 * ASCII only, so characters are octets.
 */
const lengths = '(?=[^@]{1,64}@)(?![^@]*@[^@]*[A-Za-z0-9-]{64})';

const boundedEmail = new RegExp(`^(?=.{1,254}$)${lengths}${syntax}$`);

/**
 * The same rule as a JSON Schema `pattern`, for an entry as a caller writes it: spaces at either end
 * are trimmed before the address is checked (the OpenAPI document states the enforced rule).
 */
export const paddedEmailPattern = `^\\s*(?=\\S{1,254}\\s*$)${lengths}${syntax}\\s*$`;

/** A syntactically valid email address (docs/behaviour.md#validation), refused with `error`. */
export const emailAddress = (error?: string) =>
  z.email({ pattern: boundedEmail, ...(error ? { error } : {}) });

import { z } from 'zod';

/**
 * Zod's address syntax, within the lengths of RFC 5321 that it leaves unchecked: at most 254
 * characters in all (a path of 256 less its brackets), 64 before the `@`, and 63 in each label of
 * the domain. The syntax admits ASCII only, so characters are octets.
 */
const boundedEmail = new RegExp(
  `^(?=.{1,254}$)(?=[^@]{1,64}@)(?![^@]*@[^@]*[A-Za-z0-9-]{64})${z.regexes.email.source.slice(1)}`,
);

/** A syntactically valid email address (docs/behaviour.md#validation), refused with `error`. */
export const emailAddress = (error?: string) =>
  z.email({ pattern: boundedEmail, ...(error ? { error } : {}) });

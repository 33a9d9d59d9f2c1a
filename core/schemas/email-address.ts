import { z } from 'zod';

/** A character of an RFC 5322 atom, as a local part may hold them (`a!b`, `o'neil`, `x=y`). */
const atext = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]";
/** A domain label as RFC 1035 writes them: letters, digits and inner hyphens. */
const label = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?';

/**
 * An address as a mail system writes one (RFC 5321's dot-atom `Mailbox`, quoted local parts and
 * address literals left out): atoms joined by dots before the `@`; after it, two or more labels
 * whose last holds a letter and two characters at least (`.com`, `.xn--p1ai`, not `.1`).
 */
const syntax = `${atext}+(?:\\.${atext}+)*@(?:${label}\\.)+(?=[A-Za-z0-9-]*[A-Za-z])(?=[A-Za-z0-9-]{2})${label}`;

/**
 * The lengths of RFC 5321 that the syntax leaves unchecked: at most 254 characters in all (a path of
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

import { describe, expect, it } from 'vitest';
import { emailAddress, paddedEmailPattern } from '../../core/schemas/email-address.js';

/** The address rule of user_emails and of the seed (docs/http-api.md#request-body), and its OpenAPI pattern. */
const schema = emailAddress();
const pattern = new RegExp(paddedEmailPattern, 'u');

describe('a syntactically valid email address', () => {
  it.each([
    'bob@acme.test',
    'first.last+tag@sub.acme.test',
    // Atoms of RFC 5322 that mail systems hand out.
    'a!b@acme.test',
    'a=b@acme.test',
    "o'neil@acme.test",
    'x#y$z%w&v*u/t?s^r_q`p{o|n}m~l@acme.test',
    // A top-level domain in its ASCII form (IDNA), and a label with a digit or an inner hyphen.
    'user@example.xn--p1ai',
    'user@b2b-shop.co.uk',
  ])('accepts %s', (address) => {
    expect(schema.safeParse(address).success).toBe(true);
    expect(pattern.test(` ${address} `)).toBe(true);
  });

  it.each([
    'a..b@acme.test',
    '.a@acme.test',
    'a.@acme.test',
    'a b@acme.test',
    'a"b@acme.test',
    'é@acme.test',
    'a@acme',
    'a@acme.1',
    'a@acme.t',
    'a@1.2.3.4',
    'a@[127.0.0.1]',
    'a@-acme.test',
    'a@acme-.test',
    'a@acme..test',
    'a@acme.test.',
    'a@ac_me.test',
    '@acme.test',
    `${'a'.repeat(65)}@acme.test`,
    `a@${'b'.repeat(64)}.test`,
  ])('refuses %s', (address) => {
    expect(schema.safeParse(address).success).toBe(false);
    expect(pattern.test(address)).toBe(false);
  });
});

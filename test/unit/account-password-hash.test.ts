import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '../../account/index.js';

describe('account password hashing (scrypt)', () => {
  it('stores a salted scrypt hash, never the password, and verifies only the right password', async () => {
    const hash = await hashPassword('correct horse');
    expect(hash).toMatch(/^scrypt\$15\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(hash).not.toContain('correct horse');
    expect(await verifyPassword('correct horse', hash)).toBe(true);
    expect(await verifyPassword('correct horse ', hash)).toBe(false);
    expect(await verifyPassword('Correct horse', hash)).toBe(false);
    expect(await verifyPassword('', hash)).toBe(false);
  });

  it('salts every hash: the same password hashes differently each time', async () => {
    const [first, second] = await Promise.all([hashPassword('same'), hashPassword('same')]);
    expect(first).not.toBe(second);
    expect(await verifyPassword('same', first)).toBe(true);
    expect(await verifyPassword('same', second)).toBe(true);
  });

  it('treats a password typed in another Unicode form as the same password', async () => {
    const composed = 'caf\u00e9';
    const decomposed = 'cafe\u0301';
    expect(await verifyPassword(decomposed, await hashPassword(composed))).toBe(true);
  });

  it('refuses stored values that are not its hashes, or that ask for absurd costs', async () => {
    const hash = await hashPassword('pw');
    const parts = hash.split('$');
    for (const stored of [
      '',
      'pw',
      'plaintext$pw',
      hash.replace('scrypt$', 'bcrypt$'),
      [...parts.slice(0, 1), '40', ...parts.slice(2)].join('$'),
      [...parts.slice(0, 5), 'c2hvcnQ'].join('$'),
    ]) {
      expect(await verifyPassword('pw', stored), stored).toBe(false);
    }
  });
});

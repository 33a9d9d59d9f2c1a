import { scryptSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashPassword, passwordSignIn, verifyPassword } from '../../account/index.js';
import { needsRehash, paddingFor } from '../../account/sign-in/password-hash.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { scopedTransportState } from '../../core/transport-state/scoped-state.js';
import { accountAlice, sessionRequest } from '../support/account-session.js';

/** A hash as the release before made them: N = 2^15, r = 8, p = 1. */
function earlierHash(password: string): string {
  const salt = Buffer.alloc(16, 7);
  const key = scryptSync(password, salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 2 * 128 * 2 ** 15 * 8 });
  return ['scrypt', 15, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$');
}

const alice = accountAlice;

describe('account password hashing (scrypt)', () => {
  it('stores a salted scrypt hash, never the password, and verifies only the right password', async () => {
    const hash = await hashPassword('correct horse');
    expect(hash).toMatch(/^scrypt\$15\$8\$3\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
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

  describe('hashes of an earlier release, with weaker parameters', () => {
    async function withEarlierHash() {
      const storage = memoryStorage();
      const state = scopedTransportState(storage.transportState, 'account');
      await state.set('credential:alice@acme.test', JSON.stringify({ user: alice, hash: earlierHash('pw') }));
      const signIn = passwordSignIn({ state });
      const storedHash = async () =>
        (JSON.parse((await state.get('credential:alice@acme.test'))?.value ?? '{}') as { hash: string }).hash;
      return { signIn, storedHash };
    }

    it('are still verified, and known to need hashing again', async () => {
      const stored = earlierHash('pw');
      expect(await verifyPassword('pw', stored)).toBe(true);
      expect(needsRehash(stored)).toBe(true);
      expect(needsRehash(await hashPassword('pw'))).toBe(false);
    });

    it('are hashed again at the next sign-in, whose session stands', async () => {
      const { signIn, storedHash } = await withEarlierHash();
      const result = await signIn.signIn('alice@acme.test', 'pw', '192.0.2.1');
      if (result.outcome !== 'signed-in') throw new Error(`not signed in: ${result.outcome}`);
      expect(await storedHash()).toMatch(/^scrypt\$15\$8\$3\$/);
      expect(await signIn.resolveUser(sessionRequest(signIn.cookieName, result.sessionId))).toEqual(alice);
    });

    it('are checked in the time of a new hash, so that they cannot be told from an unknown email', () => {
      expect(paddingFor(15, 8, 1)).toBe(2);
      expect(paddingFor(15, 8, 3)).toBe(0);
      expect(paddingFor(14, 8, 1)).toBe(0);
    });

    it('are hashed again once when two sign-ins race, and both sessions stand', async () => {
      const { signIn, storedHash } = await withEarlierHash();
      const results = await Promise.all([
        signIn.signIn('alice@acme.test', 'pw', '192.0.2.1'),
        signIn.signIn('alice@acme.test', 'pw', '192.0.2.2'),
      ]);
      expect(await storedHash()).toMatch(/^scrypt\$15\$8\$3\$/);
      for (const result of results) {
        if (result.outcome !== 'signed-in') throw new Error(`not signed in: ${result.outcome}`);
        expect(await signIn.resolveUser(sessionRequest(signIn.cookieName, result.sessionId))).toEqual(alice);
      }
    });

    it('are not written back by a sign-in under way while the sign-in is taken away and given again', async () => {
      const { signIn, storedHash } = await withEarlierHash();
      const underWay = signIn.signIn('alice@acme.test', 'pw', '192.0.2.1');
      await signIn.removePassword('alice@acme.test');
      await signIn.setPassword({ ...alice, admin: false }, 'new-pw');
      const replaced = await storedHash();
      expect(await underWay).toEqual({ outcome: 'refused' });
      expect(await storedHash()).toBe(replaced);
      expect((await signIn.signIn('alice@acme.test', 'pw', '192.0.2.2')).outcome).toBe('refused');
      const signedIn = await signIn.signIn('alice@acme.test', 'new-pw', '192.0.2.3');
      expect(signedIn).toMatchObject({ outcome: 'signed-in', user: { admin: false } });
    });

    it('are hashed again when the same password is set again', async () => {
      const { signIn, storedHash } = await withEarlierHash();
      await signIn.setPassword(alice, 'pw');
      const hash = await storedHash();
      expect(hash).toMatch(/^scrypt\$15\$8\$3\$/);
      await signIn.setPassword(alice, 'pw');
      expect(await storedHash()).toBe(hash);
    });
  });
});

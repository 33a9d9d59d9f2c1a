import { describe, expect, it } from 'vitest';
import { passwordSignIn } from '../../account/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { scopedTransportState } from '../../core/transport-state/scoped-state.js';
import { manualClock } from '../support/manual-clock.js';

const alice = {
  userId: 'usr_alice',
  organizationId: 'acme',
  admin: true,
  name: 'Alice Doe',
  email: 'alice@acme.test',
};

const hours = 3600_000;

async function signedIn(sessionIdleMs?: number) {
  const clock = manualClock();
  const storage = memoryStorage({ clock });
  const state = scopedTransportState(storage.transportState, 'account');
  const signIn = passwordSignIn({ state, clock, ...(sessionIdleMs ? { sessionIdleMs } : {}) });
  await signIn.setPassword(alice, 'correct horse');
  const result = await signIn.signIn('alice@acme.test', 'correct horse', '192.0.2.1');
  if (result.outcome !== 'signed-in') throw new Error(`not signed in: ${result.outcome}`);
  const resolve = () =>
    signIn.resolveUser({
      method: 'GET',
      path: '/account',
      headers: {},
      cookies: { [signIn.cookieName]: result.sessionId },
      clientAddress: '192.0.2.1',
    });
  return { clock, storage, signIn, sessionId: result.sessionId, resolve };
}

describe('account sessions', () => {
  it('resolves the signed-in user from the session cookie, and nobody without one', async () => {
    const { signIn, resolve } = await signedIn();
    expect(await resolve()).toEqual(alice);
    const anonymous = { method: 'GET', path: '/', headers: {}, cookies: {}, clientAddress: '192.0.2.1' };
    expect(await signIn.resolveUser(anonymous)).toBeNull();
    const forged = { ...anonymous, cookies: { [signIn.cookieName]: 'A'.repeat(32) } };
    expect(await signIn.resolveUser(forged)).toBeNull();
  });

  it('ends a session 12 hours after its last use', async () => {
    const { clock, resolve } = await signedIn();
    clock.advance(12 * hours - 1);
    expect(await resolve()).toEqual(alice);
    clock.advance(12 * hours + 1);
    expect(await resolve()).toBeNull();
  });

  it('slides: a session used every few hours lives on', async () => {
    const { clock, resolve } = await signedIn();
    for (let step = 0; step < 6; step++) {
      clock.advance(10 * hours);
      expect(await resolve(), `after ${(step + 1) * 10} hours`).toEqual(alice);
    }
  });

  it('ends at once on sign-out, and stays ended', async () => {
    const { clock, signIn, sessionId, resolve } = await signedIn();
    await signIn.signOut(sessionId);
    expect(await resolve()).toBeNull();
    clock.advance(2 * 60_000);
    expect(await resolve()).toBeNull();
  });

  it('keeps sessions when the same password is set again for the same user (a restart)', async () => {
    const { signIn, resolve } = await signedIn();
    await signIn.setPassword(alice, 'correct horse');
    expect(await resolve()).toEqual(alice);
  });

  it.each([
    ['a new password', alice, 'battery staple'],
    ['the same password with the admin role taken away', { ...alice, admin: false }, 'correct horse'],
    ['the same password with another name', { ...alice, name: 'Alice Smith' }, 'correct horse'],
  ])('ends the sessions of a user given %s, for good', async (_change, user, password) => {
    const { clock, signIn, resolve } = await signedIn();
    await signIn.setPassword(user, password);
    expect(await resolve()).toBeNull();
    const again = await signIn.signIn('alice@acme.test', password, '192.0.2.1');
    expect(again).toMatchObject({ outcome: 'signed-in', user });
    clock.advance(2 * 60_000);
    expect(await resolve()).toBeNull();
  });

  it('takes a sign-in away: the password no longer works and the sessions end', async () => {
    const { signIn, resolve } = await signedIn();
    await signIn.removePassword('Alice@Acme.test');
    expect(await resolve()).toBeNull();
    expect(await signIn.signIn('alice@acme.test', 'correct horse', '192.0.2.1')).toEqual({
      outcome: 'refused',
    });
    // Idempotent: taking away a sign-in that is gone already is no error, and changes nothing.
    await expect(signIn.removePassword('alice@acme.test')).resolves.toBeUndefined();
    expect(await resolve()).toBeNull();
  });

  it('keeps only a digest of the session id in storage', async () => {
    const { storage, sessionId } = await signedIn();
    const anything = await storage.transportState.get(`account:session:${sessionId}`);
    expect(anything).toBeNull();
  });
});

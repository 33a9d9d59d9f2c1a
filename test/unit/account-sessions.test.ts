import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { passwordSignIn } from '../../account/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { scopedTransportState } from '../../core/transport-state/scoped-state.js';
import { accountAlice, sessionRequest } from '../support/account-session.js';
import { manualClock } from '../support/manual-clock.js';

const alice = accountAlice;

const hours = 3600_000;

/** Where a session is stored: a digest of its id in the account's view of the transport state. */
const sessionKey = (sessionId: string) =>
  `account:session:${createHash('sha256').update(sessionId).digest('hex')}`;

async function signedIn(lifetime: { sessionIdleMs?: number; sessionMaxAgeMs?: number } = {}) {
  const clock = manualClock();
  const storage = memoryStorage({ clock });
  const state = scopedTransportState(storage.transportState, 'account');
  const signIn = passwordSignIn({ state, clock, ...lifetime });
  await signIn.setPassword(alice, 'correct horse');
  const result = await signIn.signIn('alice@acme.test', 'correct horse', '192.0.2.1');
  if (result.outcome !== 'signed-in') throw new Error(`not signed in: ${result.outcome}`);
  const resolve = () => signIn.resolveUser(sessionRequest(signIn.cookieName, result.sessionId));
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

  it('ends a session 7 days after sign-in, however much it is used', async () => {
    const { clock, resolve } = await signedIn();
    for (let elapsed = 10; elapsed < 7 * 24; elapsed += 10) {
      clock.advance(10 * hours);
      expect(await resolve(), `after ${elapsed} hours`).toEqual(alice);
    }
    clock.advance(8 * hours);
    expect(await resolve()).toBeNull();
  });

  it('takes the absolute lifetime from sessionMaxAgeMs, and expires an unused session no later', async () => {
    const used = await signedIn({ sessionMaxAgeMs: 3 * hours });
    used.clock.advance(2 * hours);
    expect(await used.resolve()).toEqual(alice);
    used.clock.advance(hours - 1);
    expect(await used.resolve()).toEqual(alice);
    used.clock.advance(1);
    expect(await used.resolve()).toBeNull();
    // Unused after its last touch, it is gone from storage at the absolute end, not an idle time later.
    const unused = await signedIn({ sessionMaxAgeMs: 3 * hours });
    unused.clock.advance(2 * hours);
    expect(await unused.resolve()).toEqual(alice);
    unused.clock.advance(hours);
    expect(await unused.storage.transportState.get(sessionKey(unused.sessionId))).toBeNull();
  });

  it('counts a session of an earlier release, without its start, from its last recorded use', async () => {
    const { clock, storage, sessionId, resolve } = await signedIn({ sessionMaxAgeMs: 3 * hours });
    clock.advance(2 * hours);
    const key = sessionKey(sessionId);
    const stored = JSON.parse((await storage.transportState.get(key))?.value ?? '{}') as Record<
      string,
      unknown
    >;
    const { startedAt: _started, ...earlier } = stored;
    await storage.transportState.set(key, JSON.stringify({ ...earlier, touchedAt: clock.now() }), {
      ttlMs: 12 * hours,
    });
    // Four hours after sign-in, two after its last recorded use: still within three hours of that.
    clock.advance(2 * hours);
    expect(await resolve()).toEqual(alice);
    clock.advance(hours);
    expect(await resolve()).toBeNull();
  });

  it('refuses a lifetime that is not a positive number of milliseconds', () => {
    const state = scopedTransportState(memoryStorage().transportState, 'account');
    expect(() => passwordSignIn({ state, sessionMaxAgeMs: 0 })).toThrow(
      'sessionMaxAgeMs must be a positive number of milliseconds, not 0',
    );
    expect(() => passwordSignIn({ state, sessionIdleMs: Number.NaN })).toThrow(RangeError);
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

  it.each([
    ['the same user', alice],
    ['another user with that email', { ...alice, userId: 'usr_alice2', admin: false }],
  ])('does not bring a session back when a sign-in taken away is given to %s again', async (_who, user) => {
    const { signIn, resolve } = await signedIn();
    await signIn.removePassword('alice@acme.test');
    await signIn.setPassword(user, 'correct horse');
    expect(await resolve()).toBeNull();
  });

  it('leaves no record when it takes away a sign-in that an email never had', async () => {
    const { signIn, storage } = await signedIn();
    await signIn.removePassword('nobody@acme.test');
    expect(await storage.transportState.get('account:credential:nobody@acme.test')).toBeNull();
  });

  it('keeps only a digest of the session id in storage', async () => {
    const { storage, sessionId } = await signedIn();
    const anything = await storage.transportState.get(`account:session:${sessionId}`);
    expect(anything).toBeNull();
  });
});

describe('the session cookie of a sign-in', () => {
  it('is named as given, so that two sign-ins in one browser keep a session each', async () => {
    const storage = memoryStorage();
    const settings = passwordSignIn({ state: scopedTransportState(storage.transportState, 'settings') });
    const other = passwordSignIn({
      state: scopedTransportState(storage.transportState, 'other'),
      cookieName: 'other_session',
    });
    expect(settings.cookieName).toBe('chat_notify_session');
    expect(other.cookieName).toBe('other_session');
    const sessions: string[] = [];
    for (const signIn of [settings, other]) {
      await signIn.setPassword(alice, 'correct horse');
      const result = await signIn.signIn('alice@acme.test', 'correct horse', '192.0.2.1');
      if (result.outcome !== 'signed-in') throw new Error(`not signed in: ${result.outcome}`);
      sessions.push(result.sessionId);
    }
    // One browser, both cookies: each sign-in finds its own session under its own name.
    const cookies = { chat_notify_session: sessions[0] ?? '', other_session: sessions[1] ?? '' };
    const browser = { method: 'GET', path: '/', headers: {}, cookies, clientAddress: '192.0.2.1' };
    expect(await settings.resolveUser(browser)).toEqual(alice);
    expect(await other.resolveUser(browser)).toEqual(alice);
  });

  it.each(['', 'two words', 'semi;colon', 'é'])('refuses %j as a cookie name', (cookieName) => {
    const storage = memoryStorage();
    expect(() =>
      passwordSignIn({ state: scopedTransportState(storage.transportState, 'account'), cookieName }),
    ).toThrow(RangeError);
  });
});

import { randomBytes } from 'node:crypto';
import { normalizeEmail, type TransportStateStore } from '../../core/adapter-kit.js';
import { type Clock, systemClock } from '../../core/index.js';
import type { ResolveUser } from '../account-user.js';
import {
  type Credential,
  credentialKey,
  isOutdated,
  newCredential,
  readCredential,
  removeCredential,
  type StoredCredential,
} from './credentials.js';
import { hashPassword, verifyPassword } from './password-hash.js';
import { type SessionUser, sessionStore } from './sessions.js';
import { defaultSignInLimits, type SignInLimits, signInThrottle } from './sign-in-throttle.js';
import { browserDigest, trustedBrowsers } from './trusted-browsers.js';

/** Options of {@link passwordSignIn}. */
export interface PasswordSignInOptions {
  /**
   * Where password hashes, sessions and the sign-in slow-down live: a namespaced view of the
   * storage's transport state, e.g. `scopedTransportState(storage.transportState, 'account')`, so that
   * every instance on the same storage shares them.
   */
  state: TransportStateStore;
  /** Decides session expiry and the refill of the sign-in slow-down. */
  clock?: Clock;
  /** A session ends this long after its last use (ms; default 12 hours). */
  sessionIdleMs?: number;
  /** A session ends this long after sign-in, however much it is used (ms; default 7 days). */
  sessionMaxAgeMs?: number;
  /** Failed sign-ins allowed per account and per address; {@link defaultSignInLimits} by default. */
  limits?: Partial<SignInLimits>;
  /**
   * Name of the session cookie, `chat_notify_session` by default. Two sign-ins in one application
   * (account pages mounted twice, for two notifiers) need a name each: a browser keeps one cookie of
   * a name, and signing in to one would sign it out of the other.
   */
  cookieName?: string;
}

/** A cookie name as RFC 6265 allows it: an HTTP token. */
const cookieNamePattern = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The answer of {@link PasswordSignIn.signIn}. */
export type SignInResult =
  | { outcome: 'signed-in'; sessionId: string; user: SessionUser }
  /** Wrong email or password: which one is never told. */
  | { outcome: 'refused' }
  /** Too many failures lately for this account or this address: no password was checked. */
  | { outcome: 'throttled'; retryAfterSeconds: number };

/** The library's own sign-in with email and password, for hosts without one (the standalone service). */
export interface PasswordSignIn {
  /** Name of the session cookie. */
  readonly cookieName: string;
  /**
   * Stores the scrypt hash of `user`'s password (never the password), replacing any earlier one.
   * Replacing it (another password, or the same with another name, role or organization) ends the
   * user's sessions; the same password for the same user keeps them, so that a restart that sets
   * every password again signs nobody out, unless it was stored by an earlier release: it is then
   * written again (as it is at the user's next sign-in). A new credential also forgets the browsers
   * that signed in with the one before.
   * @throws RangeError for an empty password.
   */
  setPassword(user: SessionUser, password: string): Promise<void>;
  /** Takes away the sign-in of `email`: its password is forgotten and its sessions end. Idempotent. */
  removePassword(email: string): Promise<void>;
  /**
   * Checks a password, slowed down after repeated failures, and starts a session when it is right.
   * `device` is a secret the browser keeps across visits (the account pages pass their CSRF anchor):
   * for 90 days after a sign-in from it, while the password stays the same, its attempts at that
   * account are slowed down in a bucket of their own, so that someone who fails on purpose elsewhere
   * cannot keep it out. An account remembers its 20 browsers used last.
   */
  signIn(email: string, password: string, clientAddress: string, device?: string): Promise<SignInResult>;
  /** Ends a session on every instance. */
  signOut(sessionId: string): Promise<void>;
  /**
   * The user of the session cookie of a request, or null: the `resolveUser` of `accountPages`. A
   * session stands only while the credential it was started with does.
   */
  resolveUser: ResolveUser;
}

/** `value` of the option `name`, a positive finite number of milliseconds, or a RangeError. */
function positiveMs(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new RangeError(`${name} must be a positive number of milliseconds, not ${value}`);
  }
  return value;
}

/** Email-and-password sign-in with sessions in storage (docs in README.md#account-pages). */
export function passwordSignIn(options: PasswordSignInOptions): PasswordSignIn {
  const { state } = options;
  const clock = options.clock ?? systemClock;
  const sessions = sessionStore(state, clock, {
    idleMs: positiveMs('sessionIdleMs', options.sessionIdleMs ?? 12 * 3600_000),
    maxAgeMs: positiveMs('sessionMaxAgeMs', options.sessionMaxAgeMs ?? 7 * 24 * 3600_000),
  });
  const throttle = signInThrottle(state, clock, { ...defaultSignInLimits, ...options.limits });
  const browsers = trustedBrowsers(state, clock);
  const cookieName = options.cookieName ?? 'chat_notify_session';
  if (!cookieNamePattern.test(cookieName)) {
    throw new RangeError(
      `passwordSignIn: cookieName must be a cookie name (letters, digits and !#$%&'*+-.^_\`|~), got ${JSON.stringify(cookieName)}`,
    );
  }
  // Unknown emails are checked against this, so that they take as long as known ones.
  let decoy: Promise<string> | null = null;

  /**
   * The credential a right `password` signs in with: `stored` itself, or, when it is of an earlier
   * release, the same written again with a fresh hash and an id. When another write landed in
   * between (another sign-in's upgrade, a new password), the credential now stored, if the password
   * is still right for it; otherwise null.
   */
  const upToDate = async (
    email: string,
    password: string,
    stored: StoredCredential,
  ): Promise<Credential | null> => {
    if (!isOutdated(stored.credential)) return stored.credential;
    const fresh = await newCredential(stored.credential.user, password);
    if ((await state.compareAndSet(credentialKey(email), JSON.stringify(fresh), stored.version)) !== null) {
      return fresh;
    }
    const now = await readCredential(state, email);
    return now !== null &&
      !isOutdated(now.credential) &&
      (await verifyPassword(password, now.credential.hash))
      ? now.credential
      : null;
  };

  return {
    cookieName,
    async setPassword(user, password) {
      if (password === '') throw new RangeError(`The password of ${user.email} is empty`);
      const current = (await readCredential(state, user.email))?.credential ?? null;
      if (
        current !== null &&
        !isOutdated(current) &&
        JSON.stringify(current.user) === JSON.stringify(user) &&
        (await verifyPassword(password, current.hash))
      ) {
        return;
      }
      await state.set(credentialKey(user.email), JSON.stringify(await newCredential(user, password)));
    },
    async removePassword(email) {
      await Promise.all([removeCredential(state, email), browsers.forget(normalizeEmail(email))]);
    },
    async signIn(email, password, clientAddress, device) {
      const account = normalizeEmail(email);
      const stored = await readCredential(state, account);
      const digest = device === undefined || device === '' ? null : browserDigest(device, account);
      const credentialId = stored?.credential.id;
      const trusted =
        digest !== null &&
        credentialId !== undefined &&
        (await browsers.trusts(account, credentialId, digest));
      const reservation = await throttle.reserve(account, clientAddress, trusted ? digest : undefined);
      if (!reservation.granted)
        return { outcome: 'throttled', retryAfterSeconds: reservation.retryAfterSeconds };
      decoy ??= hashPassword(randomBytes(16).toString('base64url'));
      const right = await verifyPassword(password, stored?.credential.hash ?? (await decoy));
      if (!right || stored === null) return { outcome: 'refused' };
      await reservation.release();
      const credential = await upToDate(account, password, stored);
      if (credential?.id === undefined) return { outcome: 'refused' };
      if (digest !== null) await browsers.remember(account, credential.id, digest);
      return {
        outcome: 'signed-in',
        sessionId: await sessions.create({ user: credential.user, credentialId: credential.id }),
        user: credential.user,
      };
    },
    signOut: (sessionId) => sessions.end(sessionId),
    resolveUser: async (request) => {
      const sessionId = request.cookies[cookieName];
      if (sessionId === undefined) return null;
      const session = await sessions.read(sessionId);
      if (session === null) return null;
      const stored = await readCredential(state, session.user.email);
      if (session.credentialId === undefined || stored?.credential.id !== session.credentialId) {
        await sessions.end(sessionId);
        return null;
      }
      return session.user;
    },
  };
}

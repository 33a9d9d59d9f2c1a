import { createHash, randomBytes } from 'node:crypto';
import { normalizeEmail, type TransportStateStore } from '../../core/adapter-kit.js';
import { type Clock, systemClock } from '../../core/index.js';
import type { ResolveUser } from '../account-user.js';
import { hashPassword, needsRehash, verifyPassword } from './password-hash.js';
import { type SessionUser, sessionStore } from './sessions.js';
import { defaultSignInLimits, type SignInLimits, signInThrottle } from './sign-in-throttle.js';

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
}

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
   * every password again signs nobody out, unless its hash was made with the weaker parameters of an
   * earlier release: it is then hashed again (as it is at the user's next sign-in).
   * @throws RangeError for an empty password.
   */
  setPassword(user: SessionUser, password: string): Promise<void>;
  /** Takes away the sign-in of `email`: its password is forgotten and its sessions end. Idempotent. */
  removePassword(email: string): Promise<void>;
  /**
   * Checks a password, slowed down after repeated failures, and starts a session when it is right.
   * `device` is a secret the browser keeps across visits (the account pages pass their CSRF anchor):
   * for 90 days after a sign-in from it, its attempts at that account are
   * slowed down in a bucket of their own, so that someone who fails on purpose elsewhere cannot keep
   * it out.
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

interface Credential {
  user: SessionUser;
  hash: string;
}

const credentialKey = (email: string) => `credential:${normalizeEmail(email)}`;

/** How long after its last sign-in to an account a browser keeps a slow-down bucket of its own there. */
const trustedDeviceMs = 90 * 24 * 3600_000;

/** Names a browser's sign-ins to one account without storing its secret. */
const deviceDigest = (device: string, account: string) =>
  createHash('sha256').update(`${device}\n${account}`).digest('hex');
const trustedKey = (digest: string) => `signin-trusted:${digest}`;

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
  const cookieName = 'chat_notify_session';
  // Unknown emails are checked against this, so that they take as long as known ones.
  let decoy: Promise<string> | null = null;

  /**
   * Hashes again, now that it is known, a password whose stored hash was made with weaker
   * parameters, and answers the credential's new version. When another write changed the credential
   * meanwhile, answers the version read: a session started on it does not stand, since the
   * credential it was checked against is gone.
   */
  const rehash = async (user: SessionUser, password: string, version: number): Promise<number> => {
    const credential: Credential = { user, hash: await hashPassword(password) };
    return (
      (await state.compareAndSet(credentialKey(user.email), JSON.stringify(credential), version)) ?? version
    );
  };

  return {
    cookieName,
    async setPassword(user, password) {
      if (password === '') throw new RangeError(`The password of ${user.email} is empty`);
      const key = credentialKey(user.email);
      const stored = await state.get(key);
      const current = stored === null ? null : (JSON.parse(stored.value) as Credential);
      if (
        current !== null &&
        JSON.stringify(current.user) === JSON.stringify(user) &&
        !needsRehash(current.hash) &&
        (await verifyPassword(password, current.hash))
      ) {
        return;
      }
      const credential: Credential = { user, hash: await hashPassword(password) };
      await state.set(key, JSON.stringify(credential));
    },
    removePassword: (email) => state.delete(credentialKey(email)),
    async signIn(email, password, clientAddress, device) {
      const account = normalizeEmail(email);
      const digest = device === undefined || device === '' ? null : deviceDigest(device, account);
      const trusted = digest !== null && (await state.get(trustedKey(digest))) !== null;
      const reservation = await throttle.reserve(account, clientAddress, trusted ? digest : undefined);
      if (!reservation.granted)
        return { outcome: 'throttled', retryAfterSeconds: reservation.retryAfterSeconds };
      const record = await state.get(credentialKey(email));
      const credential = record === null ? null : (JSON.parse(record.value) as Credential);
      decoy ??= hashPassword(randomBytes(16).toString('base64url'));
      const right = await verifyPassword(password, credential?.hash ?? (await decoy));
      if (!right || record === null || credential === null) return { outcome: 'refused' };
      await reservation.release();
      if (digest !== null) await state.set(trustedKey(digest), '1', { ttlMs: trustedDeviceMs });
      const version = needsRehash(credential.hash)
        ? await rehash(credential.user, password, record.version)
        : record.version;
      return {
        outcome: 'signed-in',
        sessionId: await sessions.create({ user: credential.user, credentialVersion: version }),
        user: credential.user,
      };
    },
    signOut: (sessionId) => sessions.end(sessionId),
    resolveUser: async (request) => {
      const sessionId = request.cookies[cookieName];
      if (sessionId === undefined) return null;
      const session = await sessions.read(sessionId);
      if (session === null) return null;
      const credential = await state.get(credentialKey(session.user.email));
      if (credential?.version !== session.credentialVersion) {
        await sessions.end(sessionId);
        return null;
      }
      return session.user;
    },
  };
}

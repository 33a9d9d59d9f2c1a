import { createHash } from 'node:crypto';
import type { TransportStateStore } from '../../core/adapter-kit.js';
import { randomBase62 } from '../../core/adapter-kit.js';
import type { Clock } from '../../core/index.js';
import type { AccountUser } from '../account-user.js';

/** The person a session belongs to, as they were when they signed in. */
export type SessionUser = Required<AccountUser>;

/** A live session: whose it is, and the credential it was started with. */
export interface Session {
  user: SessionUser;
  /**
   * The id of the user's credential at sign-in: once the credential is rewritten (a new password,
   * name or role) or removed, the session no longer stands, even if the same is written again.
   * Absent in sessions of an earlier release, which then no longer stand either.
   */
  credentialId?: string;
}

/** Sessions of the library's sign-in, kept in storage so that every instance knows them. */
export interface SessionStore {
  /** Starts a session and answers its id: the cookie's value, known to nobody else. */
  create(session: Session): Promise<string>;
  /** A live session, extending its life; null for an unknown, ended or expired one. */
  read(sessionId: string): Promise<Session | null>;
  /** Ends a session at once, for every instance. Idempotent. */
  end(sessionId: string): Promise<void>;
}

interface StoredSession extends Session {
  /** When its expiry was last pushed back (epoch ms). */
  touchedAt: number;
  /**
   * When it began (epoch ms). Absent in sessions of an earlier release, which count from their
   * last touch and have it written at the next one.
   */
  startedAt?: number;
}

/** How long a session may still live at `now`: its idle time, cut short by its absolute lifetime. */
const ttlAt = (startedAt: number, now: number, idleMs: number, maxAgeMs: number): number =>
  Math.min(idleMs, startedAt + maxAgeMs - now);

const idPattern = /^[A-Za-z0-9]{32}$/;

/** How long sessions live. */
export interface SessionLifetime {
  /** A session ends this long after its last use (sliding). */
  idleMs: number;
  /** A session ends this long after it began, however much it is used. */
  maxAgeMs: number;
}

/**
 * Sessions that end `idleMs` after their last use (sliding, pushed back at most once a minute so that
 * reading a session is not a write each time), and `maxAgeMs` after they began, used or not: a
 * stolen cookie does not stay good for ever by being used. The store keeps only a SHA-256 of each
 * id, so its content cannot be replayed as a cookie.
 */
export function sessionStore(
  state: TransportStateStore,
  clock: Clock,
  { idleMs, maxAgeMs }: SessionLifetime,
): SessionStore {
  const keyOf = (sessionId: string) => `session:${createHash('sha256').update(sessionId).digest('hex')}`;
  const touchEveryMs = Math.min(60_000, idleMs / 10);
  return {
    async create(session) {
      const sessionId = randomBase62(32);
      const now = clock.now();
      const stored: StoredSession = { ...session, touchedAt: now, startedAt: now };
      await state.set(keyOf(sessionId), JSON.stringify(stored), { ttlMs: ttlAt(now, now, idleMs, maxAgeMs) });
      return sessionId;
    },
    async read(sessionId) {
      if (!idPattern.test(sessionId)) return null;
      const key = keyOf(sessionId);
      const record = await state.get(key);
      if (record === null) return null;
      const session = JSON.parse(record.value) as StoredSession;
      const now = clock.now();
      const startedAt = session.startedAt ?? session.touchedAt;
      const ttlMs = ttlAt(startedAt, now, idleMs, maxAgeMs);
      if (ttlMs <= 0) {
        await state.delete(key);
        return null;
      }
      if (now - session.touchedAt >= touchEveryMs) {
        // Compare-and-set: a session ended meanwhile must stay ended, not be written back.
        const touched: StoredSession = { ...session, touchedAt: now, startedAt };
        await state.compareAndSet(key, JSON.stringify(touched), record.version, { ttlMs });
      }
      return { user: session.user, credentialId: session.credentialId };
    },
    end: (sessionId) => state.delete(keyOf(sessionId)),
  };
}

import { normalizeEmail, randomBase62, type TransportStateStore } from '../../core/adapter-kit.js';
import { hashPassword, needsRehash } from './password-hash.js';
import type { SessionUser } from './sessions.js';

/**
 * A user's sign-in: who they are, the hash of their password, and an id drawn at random each time
 * it is written, which sessions and trusted browsers name. Unlike the store's version, the id never
 * comes back once the credential is removed and written again. Credentials of an earlier release
 * have no id.
 */
export interface Credential {
  user: SessionUser;
  hash: string;
  id?: string;
}

/** A credential as read, with the store's version of it for a compare-and-set. */
export interface StoredCredential {
  credential: Credential;
  version: number;
}

/** Where the credential of `email` is kept. */
export const credentialKey = (email: string) => `credential:${normalizeEmail(email)}`;

/** A credential of `user` with a fresh hash of `password` and a fresh id. */
export const newCredential = async (user: SessionUser, password: string): Promise<Credential> => ({
  user,
  hash: await hashPassword(password),
  id: randomBase62(24),
});

/** Whether a credential is of an earlier release: no id, or a hash of weaker parameters. */
export const isOutdated = (credential: Credential): boolean =>
  credential.id === undefined || needsRehash(credential.hash);

/**
 * What a removed credential is replaced by. Stores number the writes of a record from 1 again once
 * it is deleted, so that a compare-and-set begun on the credential before a removal would succeed
 * on one written after it; a record that stays keeps counting.
 */
const removed = 'removed';

/**
 * Takes the sign-in of `email` away: its credential reads as none from now on. An email that has
 * none is left without a record: there is no write under way to outlast.
 */
export async function removeCredential(state: TransportStateStore, email: string): Promise<void> {
  const key = credentialKey(email);
  const record = await state.get(key);
  if (record !== null && record.value !== removed) await state.set(key, removed);
}

/** The credential of `email`, or null (none, or removed). */
export async function readCredential(
  state: TransportStateStore,
  email: string,
): Promise<StoredCredential | null> {
  const record = await state.get(credentialKey(email));
  return record === null || record.value === removed
    ? null
    : { credential: JSON.parse(record.value) as Credential, version: record.version };
}

/** An organization: the unit of isolation for users, keys, requests, limits and idempotency keys. */
export interface Organization {
  id: string;
  name: string;
}

/** Role of a user inside an organization; admins manage every key of the organization. */
export type UserRole = 'admin' | 'member';

/** A user's account on a chat platform, inside one installation (a Slack workspace, a Teams tenant). */
export interface ChatLink {
  /** Platform name, equal to the `platform` of the transport that reaches it (`slack`, `teams`). */
  platform: string;
  /** The installation of the platform the account belongs to (Slack team id, Teams tenant id). */
  installationId: string;
  /** The platform's own id of the user (Slack user id, Teams AAD object id). */
  userRef: string;
}

/** A person of an organization who can receive notifications and own API keys. */
export interface User {
  id: string;
  organizationId: string;
  /** Address as registered; matching is case-insensitive (see {@link normalizeEmail}). */
  email: string;
  /** Display name; shown as the sender in footers of messages sent with this user's keys. */
  name: string;
  role: UserRole;
  /** Accounts on chat platforms that need an explicit link (the local inbox needs none). */
  chatLinks: ChatLink[];
}

/** A personal API key as stored: never the plaintext, only its SHA-256 digest. */
export interface ApiKeyRecord {
  id: string;
  organizationId: string;
  /** Owner of the key. */
  userId: string;
  /** Descriptive label entered at creation. */
  label: string;
  /** First characters of the plaintext, shown in listings to recognize a key. */
  prefix: string;
  /** Lowercase hex SHA-256 of the plaintext key. */
  digest: string;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Epoch milliseconds of the most recent API call with this key (accurate to one minute), or null. */
  lastUsedAt: number | null;
  /** Epoch milliseconds of revocation, or null while the key is valid. */
  revokedAt: number | null;
}

/** Who is calling: the key presented, its owner and the owner's organization. */
export interface Principal {
  apiKey: ApiKeyRecord;
  user: User;
  organization: Organization;
}

/** The canonical form of an address for matching: trimmed and lowercased. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

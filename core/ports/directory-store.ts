import type { ApiKeyRecord, Organization, Principal, User } from '../domain/directory.js';

/** Filter of {@link DirectoryStore.listApiKeys}. */
export interface ApiKeyFilter {
  organizationId: string;
  /** Only the keys of this owner. */
  userId?: string;
}

/**
 * Organizations, users and API keys. Every method either completes or throws; adapters throw a
 * `NotifyError` with code `unavailable` when their backend cannot be reached.
 */
export interface DirectoryStore {
  /** Creates the organization or replaces its name. Idempotent. */
  saveOrganization: (organization: Organization) => Promise<void>;
  /** One organization by id, or null. */
  getOrganization: (id: string) => Promise<Organization | null>;
  /**
   * Creates the user or updates the one with the same organization and normalized email, keeping
   * that user's id (so that seeding twice creates no duplicate). Returns the stored user.
   */
  saveUser: (user: User) => Promise<User>;
  /** One user by id, or null. */
  getUser: (id: string) => Promise<User | null>;
  /**
   * The users of an organization whose normalized email is among `normalizedEmails`, in one round
   * trip. Emails that match nobody are simply absent from the result.
   */
  findUsersByEmail: (organizationId: string, normalizedEmails: readonly string[]) => Promise<User[]>;
  /** Every user of an organization, or of all organizations when `organizationId` is omitted. */
  listUsers: (organizationId?: string) => Promise<User[]>;
  /** Stores a key. A second save of the same digest changes nothing (idempotent seeding). */
  saveApiKey: (key: ApiKeyRecord) => Promise<void>;
  /**
   * The key with this digest together with its owner and organization, in one round trip; null
   * when the digest is unknown. Revoked keys are returned too; the caller checks `revokedAt`.
   */
  findPrincipalByDigest: (digest: string) => Promise<Principal | null>;
  /** Sets `lastUsedAt` of a key. */
  touchApiKey: (id: string, at: number) => Promise<void>;
  /** Keys matching the filter, newest first. */
  listApiKeys: (filter: ApiKeyFilter) => Promise<ApiKeyRecord[]>;
  /**
   * Marks a key revoked at `at`, atomically, unless it is revoked already (the first revocation's
   * time stands): true when this call revoked it, false when it was revoked before or no such key
   * exists. Of several calls at once, one answers true.
   */
  revokeApiKey: (id: string, at: number) => Promise<boolean>;
}

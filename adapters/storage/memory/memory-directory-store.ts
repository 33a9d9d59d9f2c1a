import {
  type ApiKeyRecord,
  type DirectoryStore,
  normalizeEmail,
  type Organization,
  type Principal,
  type User,
} from '../../../core/adapter-kit.js';

/**
 * The identity of a user inside the directory: organization and normalized email, the organization
 * prefixed by its length so that no two pairs make the same key (cheaper than a JSON array, and
 * looked up for every recipient of every send).
 */
const emailKey = (organizationId: string, email: string): string =>
  `${organizationId.length}:${organizationId}${normalizeEmail(email)}`;

/** A copy of a user made by hand: far cheaper than `structuredClone` on the admission of every request. */
const copyUser = (user: User): User => ({
  ...user,
  chatLinks: user.chatLinks.map(({ platform, installationId, userRef }) => ({
    platform,
    installationId,
    userRef,
  })),
});

/** The memory directory, plus the synchronous lookup that lets the admission store decide in one step. */
export interface MemoryDirectoryStore extends DirectoryStore {
  /** `findPrincipalByDigest`, at once. */
  principalByDigest(digest: string): Principal | null;
}

/**
 * Organizations, users and API keys in maps, with the two indexes the port looks up by: users by
 * (organization, normalized email) and keys by digest.
 */
export function memoryDirectoryStore(): MemoryDirectoryStore {
  const organizations = new Map<string, Organization>();
  const users = new Map<string, User>();
  const userIdByEmail = new Map<string, string>();
  const keys = new Map<string, ApiKeyRecord>();
  const keyIdByDigest = new Map<string, string>();

  const principalByDigest = (digest: string): Principal | null => {
    const id = keyIdByDigest.get(digest);
    const apiKey = id === undefined ? undefined : keys.get(id);
    if (apiKey === undefined) return null;
    const user = users.get(apiKey.userId);
    const organization = organizations.get(apiKey.organizationId);
    // A key whose owner or organization is gone identifies nobody.
    if (user === undefined || organization === undefined) return null;
    return { apiKey: { ...apiKey }, user: copyUser(user), organization: { ...organization } };
  };

  return {
    principalByDigest,
    async saveOrganization(organization) {
      organizations.set(organization.id, structuredClone(organization));
    },
    async getOrganization(id) {
      const organization = organizations.get(id);
      return organization === undefined ? null : { ...organization };
    },
    async saveUser(user) {
      const key = emailKey(user.organizationId, user.email);
      const stored: User = { ...structuredClone(user), id: userIdByEmail.get(key) ?? user.id };
      const previous = users.get(stored.id);
      // A user whose email (or organization) changed must not stay findable under the old one.
      if (previous !== undefined) userIdByEmail.delete(emailKey(previous.organizationId, previous.email));
      users.set(stored.id, stored);
      userIdByEmail.set(key, stored.id);
      return structuredClone(stored);
    },
    async getUser(id) {
      const user = users.get(id);
      return user === undefined ? null : copyUser(user);
    },
    async findUsersByEmail(organizationId, normalizedEmails) {
      // Every send and every timeout looks its recipients up: one pass, one list.
      const ids = new Set<string>();
      const found: User[] = [];
      for (const email of normalizedEmails) {
        const id = userIdByEmail.get(emailKey(organizationId, email));
        if (id === undefined || ids.has(id)) continue;
        ids.add(id);
        const user = users.get(id);
        if (user !== undefined) found.push(copyUser(user));
      }
      return found;
    },
    async listUsers(organizationId) {
      const all = [...users.values()];
      const selected =
        organizationId === undefined ? all : all.filter((u) => u.organizationId === organizationId);
      return structuredClone(selected);
    },
    async saveApiKey(key) {
      if (keyIdByDigest.has(key.digest)) return;
      const previous = keys.get(key.id);
      if (previous !== undefined) keyIdByDigest.delete(previous.digest);
      keys.set(key.id, structuredClone(key));
      keyIdByDigest.set(key.digest, key.id);
    },
    findPrincipalByDigest: async (digest) => principalByDigest(digest),
    async touchApiKey(id, at) {
      const key = keys.get(id);
      if (key !== undefined) key.lastUsedAt = at;
    },
    async listApiKeys(filter) {
      const selected = [...keys.values()].filter(
        (k) =>
          k.organizationId === filter.organizationId &&
          (filter.userId === undefined || k.userId === filter.userId),
      );
      // Reversed first so that keys created in the same millisecond list the later-saved one first.
      selected.reverse().sort((a, b) => b.createdAt - a.createdAt);
      return structuredClone(selected);
    },
    async revokeApiKey(id, at) {
      const key = keys.get(id);
      if (key === undefined) return false;
      // Idempotent: the first revocation time stands.
      key.revokedAt ??= at;
      return true;
    },
  } satisfies MemoryDirectoryStore;
}

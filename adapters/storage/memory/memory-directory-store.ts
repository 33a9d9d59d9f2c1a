import {
  type ApiKeyRecord,
  type DirectoryStore,
  normalizeEmail,
  type Organization,
  type Principal,
  type User,
} from '../../../core/adapter-kit.js';

/**
 * A copy of a user made by hand, field by field: far cheaper than `structuredClone` on the admission
 * of every request, and than a spread followed by more fields, which takes V8's slow path.
 */
const copyUser = (user: User): User => ({
  id: user.id,
  organizationId: user.organizationId,
  email: user.email,
  name: user.name,
  role: user.role,
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
  /**
   * User ids by organization, then normalized email: looked up for every recipient of every send and
   * timeout, without building a key of the two.
   */
  const userIdByEmail = new Map<string, Map<string, string>>();
  const emailsOf = (organizationId: string): Map<string, string> => {
    let emails = userIdByEmail.get(organizationId);
    if (emails === undefined) {
      emails = new Map();
      userIdByEmail.set(organizationId, emails);
    }
    return emails;
  };
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
      const email = normalizeEmail(user.email);
      const emails = emailsOf(user.organizationId);
      const stored = structuredClone(user);
      stored.id = emails.get(email) ?? user.id;
      const previous = users.get(stored.id);
      // A user whose email (or organization) changed must not stay findable under the old one.
      if (previous !== undefined) {
        userIdByEmail.get(previous.organizationId)?.delete(normalizeEmail(previous.email));
      }
      users.set(stored.id, stored);
      emails.set(email, stored.id);
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
      const emails = userIdByEmail.get(organizationId);
      if (emails === undefined) return found;
      for (const email of normalizedEmails) {
        const id = emails.get(normalizeEmail(email));
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
      // The first revocation time stands.
      if (key === undefined || key.revokedAt !== null) return false;
      key.revokedAt = at;
      return true;
    },
  } satisfies MemoryDirectoryStore;
}

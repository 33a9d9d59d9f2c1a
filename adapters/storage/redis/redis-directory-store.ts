import {
  type ApiKeyRecord,
  type DirectoryStore,
  normalizeEmail,
  type Organization,
  type Principal,
  type User,
} from '../../../core/adapter-kit.js';
import {
  findPrincipalScript,
  findUsersByEmailScript,
  listApiKeysScript,
  listUsersScript,
  revokeApiKeyScript,
  saveApiKeyScript,
  saveUserScript,
  touchApiKeyScript,
} from './lua/directory-lua.js';
import type { RedisKeys } from './redis-keys.js';
import type { RedisRunner } from './redis-runner.js';
import {
  asArray,
  asNumber,
  asOptionalNumber,
  asOptionalString,
  asString,
  chunks,
  parseJson,
} from './replies.js';

/** The field under which a user is filed by (organization, normalized email); JSON keeps it unambiguous. */
const emailField = (organizationId: string, normalizedEmail: string): string =>
  JSON.stringify([organizationId, normalizedEmail]);

/** A user as stored: the JSON leaves the id out, because the hash field is the id. */
const userFrom = (id: unknown, json: unknown): User => ({
  id: asString(id),
  ...parseJson<Omit<User, 'id'>>(json),
});

/**
 * A key from its saved JSON and the two fields that change after saving, set on the parsed object:
 * a spread followed by more fields would take V8's slow path on the admission of every request.
 */
const apiKeyFrom = (json: unknown, lastUsedAt: unknown, revokedAt: unknown): ApiKeyRecord => {
  const key = parseJson<ApiKeyRecord>(json);
  key.lastUsedAt = asOptionalNumber(lastUsedAt);
  key.revokedAt = asOptionalNumber(revokedAt);
  return key;
};

/** The KEYS of `find_principal`, in its order. */
export const principalKeys = (keys: RedisKeys): string[] => [
  keys.apiKeyDigests,
  keys.apiKeys,
  keys.apiKeyLastUsed,
  keys.apiKeyRevoked,
  keys.users,
  keys.organizations,
];

/** The principal of the tuple that `find_principal` answers: key JSON, lastUsedAt, revokedAt, owner, organization. */
export function principalFrom([record, lastUsedAt, revokedAt, user, organization]: unknown[]): Principal {
  const apiKey = apiKeyFrom(record, lastUsedAt, revokedAt);
  return {
    apiKey,
    user: userFrom(apiKey.userId, user),
    organization: parseJson<Organization>(organization),
  };
}

/** The users of a flat reply of `find_users` (id, JSON, id, JSON…). */
export const usersFrom = (reply: unknown): User[] => chunks(reply, 2).map(([id, json]) => userFrom(id, json));

const optionalTime = (at: number | null): string => (at === null ? '' : String(at));

/**
 * Organizations, users and API keys in hashes, with indexes kept by the writing scripts: users by
 * (organization, normalized email) and in order of first save (overall and per organization); keys
 * by digest and in per-organization and per-owner sorted sets. `lastUsedAt` and `revokedAt` live
 * beside the key's JSON so that touching and revoking are single writes that no concurrent save can
 * undo; nothing is cached, so every instance sees a revocation on its next lookup.
 */
export function redisDirectoryStore(redis: RedisRunner, keys: RedisKeys): DirectoryStore {
  /** Reads of organizations not answered yet, by id. */
  const organizationReads = new Map<string, Promise<unknown>>();
  return {
    async saveOrganization(organization) {
      organizationReads.clear();
      await redis.command(['HSET', keys.organizations, organization.id, JSON.stringify(organization)]);
    },
    async getOrganization(id) {
      // A read of the same organization under way is joined: a burst of timeouts updating the
      // copies of one organization's requests reads it once per round trip rather than once each.
      // Writes of this process start reads afresh; another process's are concurrent to any read.
      let read = organizationReads.get(id);
      if (read === undefined) {
        const started = redis.command(['HGET', keys.organizations, id]);
        read = started;
        organizationReads.set(id, started);
        const forget = (): void => {
          if (organizationReads.get(id) === started) organizationReads.delete(id);
        };
        started.then(forget, forget);
      }
      const json = asOptionalString(await read);
      return json === null ? null : (JSON.parse(json) as Organization);
    },
    async saveUser(user) {
      const { id, ...rest } = user;
      const json = JSON.stringify(rest);
      const storedId = await redis.evalScript(
        saveUserScript,
        [
          keys.users,
          keys.userOrganization,
          keys.userEmailField,
          keys.usersByEmail,
          keys.organizationUsers(user.organizationId),
          keys.userOrder,
          keys.sequence,
        ],
        [
          keys.organizationUsersBase,
          id,
          user.organizationId,
          emailField(user.organizationId, normalizeEmail(user.email)),
          json,
        ],
      );
      return userFrom(storedId, json);
    },
    async getUser(id) {
      const json = await redis.command(['HGET', keys.users, id]);
      return json === null ? null : userFrom(id, json);
    },
    async findUsersByEmail(organizationId, normalizedEmails) {
      if (normalizedEmails.length === 0) return [];
      const fields = normalizedEmails.map((email) => emailField(organizationId, email));
      return usersFrom(
        await redis.evalScript(findUsersByEmailScript, [keys.usersByEmail, keys.users], fields),
      );
    },
    async listUsers(organizationId) {
      const order = organizationId === undefined ? keys.userOrder : keys.organizationUsers(organizationId);
      return usersFrom(await redis.evalScript(listUsersScript, [order, keys.users], []));
    },
    async saveApiKey(key) {
      await redis.evalScript(
        saveApiKeyScript,
        [
          keys.apiKeys,
          keys.apiKeyDigests,
          keys.apiKeyLastUsed,
          keys.apiKeyRevoked,
          keys.apiKeyMember,
          keys.sequence,
          keys.organizationKeys(key.organizationId),
          keys.userKeys(key.userId),
        ],
        [
          keys.prefix,
          key.id,
          key.digest,
          JSON.stringify(key),
          String(key.createdAt),
          optionalTime(key.lastUsedAt),
          optionalTime(key.revokedAt),
        ],
      );
    },
    async findPrincipalByDigest(digest) {
      const reply = await redis.evalScript(findPrincipalScript, principalKeys(keys), [digest]);
      return reply === null ? null : principalFrom(asArray(reply));
    },
    async touchApiKey(id, at) {
      await redis.evalScript(touchApiKeyScript, [keys.apiKeys, keys.apiKeyLastUsed], [id, String(at)]);
    },
    async listApiKeys(filter) {
      const listing =
        filter.userId === undefined
          ? keys.organizationKeys(filter.organizationId)
          : keys.userKeys(filter.userId);
      const reply = await redis.evalScript(
        listApiKeysScript,
        [listing, keys.apiKeys, keys.apiKeyLastUsed, keys.apiKeyRevoked],
        [],
      );
      return chunks(reply, 3)
        .map(([json, lastUsedAt, revokedAt]) => apiKeyFrom(json, lastUsedAt, revokedAt))
        .filter((key) => key.organizationId === filter.organizationId);
    },
    async revokeApiKey(id, at) {
      const revoked = await redis.evalScript(
        revokeApiKeyScript,
        [keys.apiKeys, keys.apiKeyRevoked],
        [id, String(at)],
      );
      return asNumber(revoked) === 1;
    },
  } satisfies DirectoryStore;
}

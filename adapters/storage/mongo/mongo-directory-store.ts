/**
 * Organizations, users and API keys in MongoDB: one collection each, documents keyed by id.
 *
 * Atomicity scheme. Every write is a single-document operation:
 *
 * - `saveUser` is one upsert filtered on (organization, normalized email), backed by a unique index,
 *   so that seeding twice, even concurrently, keeps one user and its first id. Only when the user's
 *   own id already exists under another email or organization (the user changed address) does the
 *   insert collide on `_id`, and the user is then updated by id.
 * - `saveApiKey` is one upsert on the unique `digest` that only inserts (`$setOnInsert`): a second
 *   save of the same digest changes nothing.
 * - `revokeApiKey` keeps the first revocation time: it only updates a key whose `revokedAt` is null.
 * - `findPrincipalByDigest` is one aggregation (`$match` on the unique digest, then `$lookup` of the
 *   owner and the organization): one round trip, always reading the current documents, so a
 *   revocation or a change of owner is seen by every instance on its very next request.
 *
 * @module
 */
import { ObjectId } from 'mongodb';
import {
  type ApiKeyRecord,
  type DirectoryStore,
  normalizeEmail,
  type Organization,
  type User,
} from '../../../core/adapter-kit.js';
import type { ApiKeyDocument, MongoCollections, OrganizationDocument, UserDocument } from './collections.js';
import { guardMongoStore, isDuplicateKeyError } from './unavailable.js';

/** Options of {@link mongoDirectoryStore}. */
export type MongoDirectoryStoreOptions = Pick<MongoCollections, 'organizations' | 'users' | 'apiKeys'>;

const toOrganization = ({ _id, name }: OrganizationDocument): Organization => ({ id: _id, name });

const toUser = ({ _id, organizationId, email, name, role, chatLinks }: UserDocument): User => ({
  id: _id,
  organizationId,
  email,
  name,
  role,
  chatLinks,
});

const toApiKey = (document: ApiKeyDocument): ApiKeyRecord => ({
  id: document._id,
  organizationId: document.organizationId,
  userId: document.userId,
  label: document.label,
  prefix: document.prefix,
  digest: document.digest,
  createdAt: document.createdAt,
  lastUsedAt: document.lastUsedAt,
  revokedAt: document.revokedAt,
});

/** What `findPrincipalByDigest`'s aggregation yields. */
interface PrincipalDocument extends ApiKeyDocument {
  owner: UserDocument[];
  organization: OrganizationDocument[];
}

/** The directory; see the module comment for how each write stays atomic. */
export function mongoDirectoryStore({
  organizations,
  users,
  apiKeys,
}: MongoDirectoryStoreOptions): DirectoryStore {
  return guardMongoStore({
    async saveOrganization(organization) {
      await organizations.updateOne(
        { _id: organization.id },
        { $set: { name: organization.name } },
        { upsert: true },
      );
    },

    async getOrganization(id) {
      const document = await organizations.findOne({ _id: id });
      return document === null ? null : toOrganization(document);
    },

    async saveUser(user) {
      const emailKey = normalizeEmail(user.email);
      const { email, name, role, chatLinks, organizationId } = user;
      const upsert = () =>
        users.findOneAndUpdate(
          { organizationId, emailKey },
          { $set: { email, name, role, chatLinks }, $setOnInsert: { _id: user.id } },
          { upsert: true, returnDocument: 'after' },
        );
      let stored: UserDocument | null;
      try {
        stored = await upsert();
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
        // Either this id exists under another email or organization (the user changed address: update
        // it by id, as nobody holds the new address), or another writer inserted the same address
        // first (then the update by id finds nothing, and the upsert now updates theirs).
        stored = await users.findOneAndUpdate(
          { _id: user.id },
          { $set: { organizationId, email, emailKey, name, role, chatLinks } },
          { returnDocument: 'after' },
        );
        stored ??= await upsert();
      }
      if (stored === null) throw new Error(`saveUser: user ${user.id} vanished while being saved`);
      return toUser(stored);
    },

    async getUser(id) {
      const document = await users.findOne({ _id: id });
      return document === null ? null : toUser(document);
    },

    async findUsersByEmail(organizationId, normalizedEmails) {
      if (normalizedEmails.length === 0) return [];
      const found = await users.find({ organizationId, emailKey: { $in: [...normalizedEmails] } }).toArray();
      // In the order asked, each once, as the other stores answer: the index returns them by address.
      const byEmail = new Map(found.map((document) => [document.emailKey, document]));
      return [...new Set(normalizedEmails)].flatMap((email) => {
        const document = byEmail.get(email);
        return document === undefined ? [] : [toUser(document)];
      });
    },

    async listUsers(organizationId) {
      const found = await users.find(organizationId === undefined ? {} : { organizationId }).toArray();
      return found.map(toUser);
    },

    async saveApiKey(key) {
      const { id, digest, ...fields } = key;
      try {
        await apiKeys.updateOne(
          { digest },
          { $setOnInsert: { _id: id, ...fields, seq: new ObjectId() } },
          { upsert: true },
        );
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
        // The same digest saved concurrently: nothing to do. Otherwise this id is stored with another
        // digest: replace that key in its place, as the memory adapter does.
        if ((await apiKeys.countDocuments({ digest }, { limit: 1 })) > 0) return;
        await apiKeys.updateOne({ _id: id }, { $set: { digest, ...fields } });
      }
    },

    async findPrincipalByDigest(digest) {
      const [found] = await apiKeys
        .aggregate<PrincipalDocument>([
          { $match: { digest } },
          { $limit: 1 },
          { $lookup: { from: users.collectionName, localField: 'userId', foreignField: '_id', as: 'owner' } },
          {
            $lookup: {
              from: organizations.collectionName,
              localField: 'organizationId',
              foreignField: '_id',
              as: 'organization',
            },
          },
        ])
        .toArray();
      const owner = found?.owner[0];
      const organization = found?.organization[0];
      // A key whose owner or organization is gone identifies nobody.
      if (found === undefined || owner === undefined || organization === undefined) return null;
      return { apiKey: toApiKey(found), user: toUser(owner), organization: toOrganization(organization) };
    },

    async touchApiKey(id, at) {
      await apiKeys.updateOne({ _id: id }, { $set: { lastUsedAt: at } });
    },

    async listApiKeys(filter) {
      const query =
        filter.userId === undefined
          ? { organizationId: filter.organizationId }
          : { organizationId: filter.organizationId, userId: filter.userId };
      const found = await apiKeys.find(query).sort({ createdAt: -1, seq: -1 }).toArray();
      return found.map(toApiKey);
    },

    async revokeApiKey(id, at) {
      // The first revocation time stands: the filter matches a key not revoked yet (a null or
      // missing revokedAt), so that of several calls at once one changes it.
      const result = await apiKeys.updateOne({ _id: id, revokedAt: null }, { $set: { revokedAt: at } });
      return result.modifiedCount > 0;
    },
  } satisfies DirectoryStore);
}

import type { Collection, Document, IndexDescription } from 'mongodb';
import type { MongoStorageOptions } from './collections.js';
import { openCollections } from './collections.js';
import { toMongoStorageError } from './unavailable.js';

/** Creates the indexes of one collection in one command (which also creates the collection). */
const create = async <T extends Document>(
  collection: Collection<T>,
  indexes: IndexDescription[],
): Promise<void> => {
  await collection.createIndexes(indexes);
};

/**
 * Creates the indexes the adapter relies on; idempotent, so it may run at every start-up, before the
 * storage serves requests. The unique indexes are part of the atomicity of `saveUser`, `saveApiKey`
 * and `addDelivery`; the TTL indexes (idempotency records, rate-limit buckets, transport state, finished
 * requests and their deliveries) only reclaim space (expiry is also checked on every read).
 *
 * @throws NotifyError `unavailable` when the server cannot be reached.
 */
export async function ensureMongoIndexes(options: MongoStorageOptions): Promise<void> {
  const c = openCollections(options);
  try {
    // One command per collection, the collections in parallel: concurrent commands on one collection
    // that does not exist yet could race to create it.
    await Promise.all([
      create(c.users, [
        { key: { organizationId: 1, emailKey: 1 }, unique: true, name: 'organization_email' },
      ]),
      create(c.apiKeys, [
        { key: { digest: 1 }, unique: true, name: 'digest' },
        { key: { organizationId: 1, createdAt: -1, seq: -1 }, name: 'organization_newest' },
      ]),
      // Claims and nextRunAt walk documents by their earliest item; complete, reschedule and
      // replacements find an item by id.
      create(c.requests, [
        { key: { nextClaimableAt: 1 }, name: 'next_claimable_at' },
        { key: { 'due.id': 1 }, name: 'due_id' },
        { key: { expiresAt: 1 }, expireAfterSeconds: 0, name: 'expiry' },
      ]),
      create(c.deliveries, [
        { key: { sendId: 1, recipient: 1, platform: 1 }, unique: true, name: 'send_recipient_platform' },
        { key: { expiresAt: 1 }, expireAfterSeconds: 0, name: 'expiry' },
      ]),
      create(c.idempotency, [{ key: { expiresAt: 1 }, expireAfterSeconds: 0, name: 'expiry' }]),
      create(c.rateLimits, [{ key: { expiresAt: 1 }, expireAfterSeconds: 0, name: 'expiry' }]),
      create(c.transportState, [{ key: { expiresAt: 1 }, expireAfterSeconds: 0, name: 'expiry' }]),
      create(c.failedCallbacks, [
        { key: { failedAt: 1, seq: 1 }, name: 'failure_order' },
        { key: { expiresAt: 1 }, expireAfterSeconds: 0, name: 'expiry' },
      ]),
    ]);
  } catch (error) {
    throw toMongoStorageError(error);
  }
}

/**
 * Every storage port on MongoDB, through the official `mongodb` driver (an optional peer dependency,
 * imported only here). MongoDB 6 or later; a standalone server is enough: every operation is atomic
 * on a single document, and none needs a transaction. Each store's file says how it stays atomic.
 *
 * ```ts
 * const client = new MongoClient(url);
 * await client.connect();
 * const options = { db: client.db('notify') };
 * await ensureMongoIndexes(options);
 * const storage = mongoStorage(options);
 * ```
 *
 * Clocks: rate-limit refills, idempotency expiry and transport-state expiry follow the server's
 * clock (`$$NOW`), shared by every instance; due times and leases are the caller's (`now`, `runAt`),
 * as the ports define them.
 *
 * Errors: every method reports an unreachable server (network errors, no server selected, client or
 * topology closed, a primary stepping down) as `NotifyError('unavailable')` with `retryAfterSeconds`
 * 1 and the driver's error as `cause`.
 *
 * @module
 */
import type { StoragePorts } from '../../../core/adapter-kit.js';
import type { MongoStorageOptions } from './collections.js';
import { openCollections } from './collections.js';
import { mongoAdmissionStore } from './mongo-admission-store.js';
import { mongoDeliveryStore } from './mongo-delivery-store.js';
import { mongoDirectoryStore } from './mongo-directory-store.js';
import { mongoDueWorkStore } from './mongo-due-work-store.js';
import { mongoFailedCallbackStore } from './mongo-failed-callback-store.js';
import { mongoIdempotencyStore } from './mongo-idempotency-store.js';
import { mongoRateLimitStore } from './mongo-rate-limit-store.js';
import { mongoRequestStore } from './mongo-request-store.js';
import { mongoTransportStateStore } from './mongo-transport-state-store.js';

export type { MongoStorageOptions } from './collections.js';
export { defaultCollectionPrefix } from './collections.js';
export { ensureMongoIndexes } from './indexes.js';
export { isUnavailableError } from './unavailable.js';

/**
 * Every storage port on one MongoDB database. The caller builds, connects and closes the client; run
 * {@link ensureMongoIndexes} once before serving (the unique indexes are part of the atomicity).
 */
export function mongoStorage(options: MongoStorageOptions): StoragePorts {
  if (typeof (options as Partial<MongoStorageOptions> | undefined)?.db?.collection !== 'function') {
    throw new TypeError(
      "mongoStorage needs { db }: a database of a connected MongoClient, client.db('notify')",
    );
  }
  const collections = openCollections(options);
  const directory = mongoDirectoryStore(collections);
  const rateLimits = mongoRateLimitStore(collections);
  const idempotency = mongoIdempotencyStore(collections);
  const requests = mongoRequestStore(collections);
  return {
    directory,
    requests,
    deliveries: mongoDeliveryStore(collections),
    idempotency,
    rateLimits,
    admission: mongoAdmissionStore({ directory, rateLimits, idempotency, requests }),
    dueWork: mongoDueWorkStore(collections),
    transportState: mongoTransportStateStore(collections),
    failedCallbacks: mongoFailedCallbackStore(collections),
  };
}

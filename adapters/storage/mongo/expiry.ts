import { ttlMillis } from '../../../core/adapter-kit.js';

/**
 * Query filter: the document has no `expiresAt`, or it is still ahead by the server's clock. The TTL
 * index deletes expired documents within about a minute; reads must not see them meanwhile.
 */
export const notExpired = {
  $expr: { $or: [{ $eq: [{ $ifNull: ['$expiresAt', null] }, null] }, { $gt: ['$expiresAt', '$$NOW'] }] },
};

/**
 * Query filter: the document has an `expiresAt` the server's clock has passed, though the TTL index
 * has not deleted it yet. Such a document is gone, as if never stored.
 */
export const expired = {
  $expr: { $and: [{ $ne: [{ $ifNull: ['$expiresAt', null] }, null] }, { $lte: ['$expiresAt', '$$NOW'] }] },
};

/** Aggregation expression of `ttlMs` from the server's now, or null when no expiry is asked for. */
export const expiryAfter = (options: { ttlMs?: number } | undefined): { $add: unknown[] } | null => {
  const ttl = ttlMillis(options);
  return ttl === null ? null : { $add: ['$$NOW', ttl] };
};

import { ttlMillis } from '../../../core/adapter-kit.js';

/**
 * Query filter: the document has no `expiresAt`, or it is still ahead by the server's clock. The TTL
 * index deletes expired documents within about a minute; reads must not see them meanwhile.
 */
export const notExpired = {
  $expr: { $or: [{ $eq: [{ $ifNull: ['$expiresAt', null] }, null] }, { $gt: ['$expiresAt', '$$NOW'] }] },
};

/** Aggregation expression of `ttlMs` from the server's now, or null when no expiry is asked for. */
export const expiryAfter = (options: { ttlMs?: number } | undefined): { $add: unknown[] } | null => {
  const ttl = ttlMillis(options);
  return ttl === null ? null : { $add: ['$$NOW', ttl] };
};

import { ttlMillis } from '../../../core/adapter-kit.js';

/** Script argument of an optional expiry: whole milliseconds for PEXPIRE (rounded up), or '' for none. */
export const encodeTtl = (options: { ttlMs?: number } | undefined): string => {
  const ttl = ttlMillis(options);
  return ttl === null ? '' : String(ttl);
};

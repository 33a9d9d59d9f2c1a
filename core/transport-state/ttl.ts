import type { TransportStateWriteOptions } from '../ports/transport-state-store.js';

/**
 * The whole milliseconds a write lives for, or null when it lives until deleted. Rounds up, so a
 * record is never forgotten early.
 *
 * @throws RangeError when `ttlMs` is given but is not a positive finite number.
 */
export function ttlMillis(options: TransportStateWriteOptions | undefined): number | null {
  const ttlMs = options?.ttlMs;
  if (ttlMs === undefined) return null;
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw new RangeError(`ttlMs must be a positive finite number, got ${ttlMs}`);
  }
  return Math.ceil(ttlMs);
}

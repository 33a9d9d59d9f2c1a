import type { Clock } from '../../../core/adapter-kit.js';

/** Fewest writes between two sweeps: a small map is not scanned on every write. */
const minimumInterval = 64;

/**
 * Amortized purge of the expired entries of a map, for stores whose entries expire but are not
 * always read again. A sweep runs once the writes since the last one reach the size the map had
 * after it (at least {@link minimumInterval}), so each write pays for O(1) entries of a scan on
 * average, and expired entries never outnumber the live ones and the recent writes by much.
 *
 * Counting writes rather than waiting for the map to double matters for maps with few keys written
 * many times (the per-period inbox lists: a handful of keys, each appended to thousands of times
 * and never read once its period is over): their size never grows, yet their expired entries
 * hold everything appended to them.
 *
 * The clock is read only when a sweep runs; `forEach` scans a map of millions of entries in about
 * half the time of a `for…of` over its entries.
 *
 * @returns a function to call after each write (an insertion or a change of an entry).
 */
export function createLazySweep<K, V>(
  map: Map<K, V>,
  isExpired: (value: V, now: number) => boolean,
  clock: Clock,
): () => void {
  let writes = 0;
  let interval = minimumInterval;
  return () => {
    writes += 1;
    if (writes < interval) return;
    const now = clock.now();
    map.forEach((value, key) => {
      if (isExpired(value, now)) map.delete(key);
    });
    writes = 0;
    interval = Math.max(minimumInterval, map.size);
  };
}

/** Smallest map size at which a sweep runs; below it, expired entries are only dropped as they are read. */
const minimumThreshold = 1024;

/**
 * Amortized purge of the expired entries of a map, for stores whose entries expire but are not
 * always read again. A sweep runs only once the map has doubled since the last one, so each write
 * costs O(1) on average and expired entries never outnumber the live ones by much.
 *
 * @returns a function to call after each insertion, with the current time.
 */
export function createLazySweep<K, V>(
  map: Map<K, V>,
  isExpired: (value: V, now: number) => boolean,
): (now: number) => void {
  let threshold = minimumThreshold;
  return (now) => {
    if (map.size < threshold) return;
    for (const [key, value] of map) if (isExpired(value, now)) map.delete(key);
    threshold = Math.max(minimumThreshold, 2 * map.size);
  };
}

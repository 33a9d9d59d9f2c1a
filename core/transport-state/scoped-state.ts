import type { TransportStateStore } from '../ports/transport-state-store.js';

/**
 * The view of `store` that the transport of `platform` receives: every key it uses is stored under
 * `<platform>:`, so platforms can neither read nor overwrite each other's keys. A platform name
 * cannot contain `:`, or `a` + `b:c` and `a:b` + `c` would meet on one key.
 *
 * @throws RangeError for an empty platform name or one that contains `:`.
 */
export function scopedTransportState(store: TransportStateStore, platform: string): TransportStateStore {
  if (platform === '' || platform.includes(':')) {
    throw new RangeError(`A transport's platform must be a non-empty name without ':', got "${platform}"`);
  }
  const scoped = (key: string): string => `${platform}:${key}`;
  return {
    get: (key) => store.get(scoped(key)),
    getMany: (keys) => store.getMany(keys.map(scoped)),
    set: (key, value, options) => store.set(scoped(key), value, options),
    compareAndSet: (key, value, expectedVersion, options) =>
      store.compareAndSet(scoped(key), value, expectedVersion, options),
    delete: (key) => store.delete(scoped(key)),
    append: (key, value, options) => store.append(scoped(key), value, options),
    readList: (key) => store.readList(scoped(key)),
  };
}

import {
  type Clock,
  type TransportStateRecord,
  type TransportStateStore,
  type TransportStateWriteOptions,
  ttlMillis,
} from '../../../core/adapter-kit.js';
import { flatString } from './flat-string.js';
import { createLazySweep } from './lazy-sweep.js';

/** Options of {@link memoryTransportStateStore}. */
export interface MemoryTransportStateStoreOptions {
  /** Decides when records and lists expire, as a server's clock would for Redis or MongoDB. */
  clock: Clock;
}

/** When an entry expires: store-clock epoch milliseconds, or null for never. */
interface Expiring {
  expiresAt: number | null;
}

interface StoredRecord extends Expiring, TransportStateRecord {}

interface StoredList extends Expiring {
  entries: string[];
}

const isExpired = (entry: Expiring, now: number): boolean =>
  entry.expiresAt !== null && entry.expiresAt <= now;

/**
 * Transport state in two maps, records and lists. Expired entries are dropped when read and swept
 * lazily as they are written. Every method runs without awaiting in between, so each is atomic.
 */
export function memoryTransportStateStore({ clock }: MemoryTransportStateStoreOptions): TransportStateStore {
  const records = new Map<string, StoredRecord>();
  const lists = new Map<string, StoredList>();
  const sweepRecords = createLazySweep(records, isExpired, clock);
  const sweepLists = createLazySweep(lists, isExpired, clock);

  /** The entry of `key` unless it has expired, in which case it is dropped. */
  const live = <T extends Expiring>(map: Map<string, T>, key: string): T | undefined => {
    // Keys come in built from pieces (the transport's scope, a prefix, an id): a flat key hashes
    // and compares at once.
    const entry = map.get(flatString(key));
    if (entry === undefined || !isExpired(entry, clock.now())) return entry;
    map.delete(key);
    return undefined;
  };

  const expiryOf = (options: TransportStateWriteOptions | undefined): number | null => {
    const ttl = ttlMillis(options);
    return ttl === null ? null : clock.now() + ttl;
  };

  /**
   * Writes `value` as the record `key`, whose live entry, if any, is `current`. A rewrite changes
   * the entry in place: a record rewritten on every click and timeout then adds nothing for the
   * young generation to copy but its new value.
   */
  const write = (
    key: string,
    current: StoredRecord | undefined,
    value: string,
    expiresAt: number | null,
  ): number => {
    const version = (current?.version ?? 0) + 1;
    if (current === undefined) records.set(flatString(key), { value: flatString(value), version, expiresAt });
    else {
      current.value = flatString(value);
      current.version = version;
      current.expiresAt = expiresAt;
    }
    sweepRecords();
    return version;
  };

  const read = (key: string): TransportStateRecord | null => {
    const record = live(records, key);
    return record === undefined ? null : { value: record.value, version: record.version };
  };

  return {
    get: async (key) => read(key),

    getMany: async (keys) => keys.map(read),

    set: async (key, value, options) => write(key, live(records, key), value, expiryOf(options)),

    compareAndSet: async (key, value, expectedVersion, options) => {
      const current = live(records, key);
      if ((current?.version ?? null) !== expectedVersion) return null;
      return write(key, current, value, expiryOf(options));
    },

    delete: async (key) => {
      records.delete(key);
      lists.delete(key);
    },

    append: async (key, value, options) => {
      const expiresAt = expiryOf(options);
      const list = live(lists, key);
      if (list === undefined) lists.set(flatString(key), { entries: [flatString(value)], expiresAt });
      else {
        list.entries.push(flatString(value));
        list.expiresAt = expiresAt;
      }
      sweepLists();
    },

    readList: async (key) => [...(live(lists, key)?.entries ?? [])],
  } satisfies TransportStateStore;
}

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

  /**
   * The entry of `key` unless it has expired by `now`, in which case it is dropped. Each operation
   * reads the clock once, for every entry it looks at and the expiry it writes.
   */
  const live = <T extends Expiring>(map: Map<string, T>, key: string, now: number): T | undefined => {
    // Keys come in built from pieces (the transport's scope, a prefix, an id): a flat key hashes
    // and compares at once.
    const entry = map.get(flatString(key));
    if (entry === undefined || !isExpired(entry, now)) return entry;
    map.delete(key);
    return undefined;
  };

  const expiryOf = (options: TransportStateWriteOptions | undefined, now: number): number | null => {
    const ttl = ttlMillis(options);
    return ttl === null ? null : now + ttl;
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

  const read = (key: string, now: number): TransportStateRecord | null => {
    const record = live(records, key, now);
    return record === undefined ? null : { value: record.value, version: record.version };
  };

  return {
    get: async (key) => read(key, clock.now()),

    getMany: async (keys) => {
      const now = clock.now();
      return keys.map((key) => read(key, now));
    },

    set: async (key, value, options) => {
      const now = clock.now();
      return write(key, live(records, key, now), value, expiryOf(options, now));
    },

    compareAndSet: async (key, value, expectedVersion, options) => {
      const now = clock.now();
      const current = live(records, key, now);
      if ((current?.version ?? null) !== expectedVersion) return null;
      return write(key, current, value, expiryOf(options, now));
    },

    delete: async (key) => {
      records.delete(key);
      lists.delete(key);
    },

    append: async (key, value, options) => {
      const now = clock.now();
      const expiresAt = expiryOf(options, now);
      const list = live(lists, key, now);
      if (list === undefined) lists.set(flatString(key), { entries: [flatString(value)], expiresAt });
      else {
        list.entries.push(flatString(value));
        list.expiresAt = expiresAt;
      }
      sweepLists();
    },

    readList: async (key) => [...(live(lists, key, clock.now())?.entries ?? [])],
  } satisfies TransportStateStore;
}

import {
  type TransportStateRecord,
  type TransportStateStore,
  type TransportStateWriteOptions,
  ttlMillis,
} from '../../../core/adapter-kit.js';
import {
  appendEntryScript,
  compareAndSetRecordScript,
  getRecordsScript,
  setRecordScript,
} from './lua/transport-state-lua.js';
import type { RedisKeys } from './redis-keys.js';
import type { RedisRunner } from './redis-runner.js';
import { asArray, asNumber, asOptionalString, asString, chunks } from './replies.js';

/** The ttl argument of the scripts: whole milliseconds, or '' for none. */
const ttlArg = (options: TransportStateWriteOptions | undefined): string => {
  const ttl = ttlMillis(options);
  return ttl === null ? '' : String(ttl);
};

/** A record from its value and version as the scripts answer them, or null when there is none. */
const toRecord = ([value, version]: unknown[]): TransportStateRecord | null => {
  const text = asOptionalString(value);
  return text === null ? null : { value: text, version: Number(asString(version)) };
};

/**
 * Transport state as one string `<version>:<value>` per record (the `{value, version}` hashes of
 * earlier releases are still read, and replaced on their next write: a string of a few hundred
 * bytes costs Redis about 150 bytes less than such a hash) and one Redis list per list, each under
 * the key prefix and left to Redis to expire (on the server's clock, so an expired key is never
 * read). A record is read by a plain GET (HMGET for an earlier release's hash, which refuses it),
 * several at once and every write by a script, so that compare-and-set stays atomic across
 * instances; lists are read by a single command.
 */
export function redisTransportStateStore(redis: RedisRunner, keys: RedisKeys): TransportStateStore {
  return {
    async get(key) {
      const record = keys.transportRecord(key);
      let stored: string | null;
      try {
        // A plain GET, the cheapest read for the server; a hash of an earlier release refuses it.
        stored = asOptionalString(await redis.command(['GET', record]));
      } catch (error) {
        if (!(error instanceof Error && error.message.startsWith('WRONGTYPE'))) throw error;
        return toRecord(asArray(await redis.command(['HMGET', record, 'value', 'version'])));
      }
      if (stored === null) return null;
      const colon = stored.indexOf(':');
      return { value: stored.slice(colon + 1), version: Number(stored.slice(0, colon)) };
    },

    async getMany(requested) {
      if (requested.length === 0) return [];
      const reply = await redis.evalScript(getRecordsScript, requested.map(keys.transportRecord), []);
      return chunks(reply, 2).map(toRecord);
    },

    async set(key, value, options) {
      const ttl = ttlArg(options);
      return asNumber(await redis.evalScript(setRecordScript, [keys.transportRecord(key)], [value, ttl]));
    },

    async compareAndSet(key, value, expectedVersion, options) {
      const ttl = ttlArg(options);
      const expected = expectedVersion === null ? '' : String(expectedVersion);
      const version = asNumber(
        await redis.evalScript(
          compareAndSetRecordScript,
          [keys.transportRecord(key)],
          [value, expected, ttl],
        ),
      );
      return version === 0 ? null : version;
    },

    async delete(key) {
      await redis.command(['DEL', keys.transportRecord(key), keys.transportList(key)]);
    },

    async append(key, value, options) {
      const ttl = ttlArg(options);
      await redis.evalScript(appendEntryScript, [keys.transportList(key)], [value, ttl]);
    },

    async readList(key) {
      return asArray(await redis.command(['LRANGE', keys.transportList(key), '0', '-1'])).map(asString);
    },
  } satisfies TransportStateStore;
}

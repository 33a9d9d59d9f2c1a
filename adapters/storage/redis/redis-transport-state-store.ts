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

/** A record from the value and version fields of its hash, or null when the hash is absent. */
const toRecord = ([value, version]: unknown[]): TransportStateRecord | null => {
  const text = asOptionalString(value);
  return text === null ? null : { value: text, version: Number(asString(version)) };
};

/**
 * Transport state as one hash `{value, version}` per record and one Redis list per list, each under
 * the key prefix and left to Redis to expire (PEXPIRE, on the server's clock, so an expired key is
 * never read). Reads are single commands; writes that must check or combine steps are one script
 * each, so compare-and-set stays atomic across instances.
 */
export function redisTransportStateStore(redis: RedisRunner, keys: RedisKeys): TransportStateStore {
  return {
    async get(key) {
      return toRecord(asArray(await redis.command(['HMGET', keys.transportRecord(key), 'value', 'version'])));
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

import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { afterAll } from 'vitest';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { redisStorage } from '../../adapters/storage/redis/index.js';
import type { StoragePorts } from '../../core/ports/storage.js';

/** The Redis server of the tests. */
export const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Whether a Redis server answers at `url` (the tests' server by default) within a second. */
export async function redisAvailable(url = redisUrl): Promise<boolean> {
  const client = createClient({ url, socket: { connectTimeout: 1_000, reconnectStrategy: false } });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch {
    return false;
  } finally {
    if (client.isOpen) await client.quit();
  }
}

/** Redis storage for tests that run on it too: one key prefix per storage, all dropped by `release`. */
export interface RedisTestStorages {
  /** A fresh storage under a key prefix no other test uses. */
  storage(): StoragePorts;
  /** Deletes every key of the storages made, and closes the connection. */
  release(): Promise<void>;
}

/** {@link RedisTestStorages} on the tests' server, or null when no Redis answers there. */
export async function redisTestStorages(): Promise<RedisTestStorages | null> {
  if (!(await redisAvailable())) return null;
  const client = createClient({ url: redisUrl });
  client.on('error', () => undefined);
  await client.connect();
  const prefixes: string[] = [];
  return {
    storage() {
      const keyPrefix = `chat-notify-test:${randomUUID()}:`;
      prefixes.push(keyPrefix);
      return redisStorage({ client, keyPrefix });
    },
    async release() {
      for (const prefix of prefixes) {
        for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
          if (keys.length > 0) await client.unlink(keys);
        }
      }
      client.destroy();
    },
  };
}

/**
 * The storages a test runs on, by name, for `describe.each`: memory, and Redis when a server answers
 * (its keys dropped once the file's tests ran); says so when Redis is left out, naming `what`.
 */
export async function memoryAndRedisStorages(what: string): Promise<Array<[string, () => StoragePorts]>> {
  const storages: Array<[string, () => StoragePorts]> = [['memory', () => memoryStorage()]];
  const redis = await redisTestStorages();
  if (redis) {
    afterAll(() => redis.release());
    storages.push(['redis', () => redis.storage()]);
  } else {
    console.warn(`${what} on Redis skipped: no Redis answers at ${redisUrl}`);
  }
  return storages;
}

import { memoryStorage } from '../../adapters/storage/memory/index.js';
import type { Logger, StoragePorts } from '../../core/index.js';

/** Storage and the means to release its connection. */
export interface OpenedStorage {
  storage: StoragePorts;
  close(): Promise<void>;
}

/**
 * The URL with its password masked, for logs and `/healthz`: everything from the `:` after the user
 * name to the last `@`, so that a password holding an `@` or a `/` the operator did not encode is
 * masked whole too (masking more than the password, never less).
 */
export const redactUrl = (url: string): string => url.replace(/\/\/([^:@/]*):[\s\S]*@/, '//$1:***@');

// Drivers load only when selected, so a memory-only start needs neither.
async function openRedis(url: string, keyPrefix: string, logger: Logger): Promise<OpenedStorage> {
  const { createClient } = await import('redis');
  const { redisStorage } = await import('../../adapters/storage/redis/index.js');
  // Until the first connection this client does not retry: the start-up wait does, and logs each
  // try. Once connected, it reconnects by itself, and commands fail at once while disconnected
  // (503 to callers) instead of queueing until a timeout.
  let connected = false;
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      reconnectStrategy: (retries) => connected && Math.min(100 * 2 ** retries, 2_000),
      connectTimeout: 5_000,
    },
  });
  let down = false;
  client.on('error', (error: unknown) => {
    if (!connected || down) return;
    down = true;
    logger.error('redis connection lost; reconnecting', { error: String(error) });
  });
  client.on('ready', () => {
    if (!down) return;
    down = false;
    logger.info('redis connection restored');
  });
  await client.connect();
  connected = true;
  return {
    storage: redisStorage({ client, keyPrefix }),
    close: async () => {
      await client.quit().catch(() => client.destroy());
    },
  };
}

async function openMongo(url: string): Promise<OpenedStorage> {
  const { MongoClient } = await import('mongodb');
  const { ensureMongoIndexes, mongoStorage } = await import('../../adapters/storage/mongo/index.js');
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 2_000 });
  try {
    await client.connect();
    const db = client.db();
    await ensureMongoIndexes({ db });
    return { storage: mongoStorage({ db }), close: () => client.close() };
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  }
}

/** Checks that `NOTIFY_STORAGE` names a storage: `memory`, `redis://…` / `rediss://…`, or `mongodb://…` / `mongodb+srv://…`. */
export function checkStorageSetting(setting: string): void {
  if (setting === 'memory' || /^rediss?:\/\//.test(setting) || /^mongodb(\+srv)?:\/\//.test(setting)) return;
  throw new Error(
    `NOTIFY_STORAGE must be "memory", a redis:// URL or a mongodb:// URL; got ${redactUrl(setting)}`,
  );
}

/** Makes one try at opening the storage that `NOTIFY_STORAGE` names (see {@link checkStorageSetting}). */
export async function openStorage(
  setting: string,
  options: { redisPrefix: string; logger: Logger },
): Promise<OpenedStorage> {
  checkStorageSetting(setting);
  if (/^rediss?:\/\//.test(setting)) return openRedis(setting, options.redisPrefix, options.logger);
  if (/^mongodb(\+srv)?:\/\//.test(setting)) return openMongo(setting);
  return { storage: memoryStorage(), close: async () => {} };
}

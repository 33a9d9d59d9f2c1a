import { memoryStorage } from '../../adapters/storage/memory/index.js';
import type { Logger } from '../../core/ports/logger.js';
import type { StoragePorts } from '../../core/ports/storage.js';

/** Storage and the means to release its connection. */
export interface OpenedStorage {
  storage: StoragePorts;
  close(): Promise<void>;
}

/** Where the URL's password would be, masked for logs. */
export const redactUrl = (url: string): string => url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');

// Drivers load only when selected, so a memory-only start needs neither.
async function openRedis(url: string, keyPrefix: string, logger: Logger): Promise<OpenedStorage> {
  const { createClient } = await import('redis');
  const { redisStorage } = await import('../../adapters/storage/redis/index.js');
  // Commands fail at once while disconnected (503 to callers) instead of queueing until a timeout.
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, 2_000), connectTimeout: 5_000 },
  });
  let down = false;
  client.on('error', (error: unknown) => {
    if (!down) logger.error('redis connection lost; reconnecting', { error: String(error) });
    down = true;
  });
  client.on('ready', () => {
    if (down) logger.info('redis connection restored');
    down = false;
  });
  await client.connect();
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
  await client.connect();
  const db = client.db();
  await ensureMongoIndexes({ db });
  return { storage: mongoStorage({ db }), close: () => client.close() };
}

/** Opens the storage that `NOTIFY_STORAGE` names: `memory`, `redis://…` / `rediss://…`, or `mongodb://…` / `mongodb+srv://…`. */
export async function openStorage(
  setting: string,
  options: { redisPrefix: string; logger: Logger },
): Promise<OpenedStorage> {
  if (setting === 'memory') return { storage: memoryStorage(), close: async () => {} };
  if (/^rediss?:\/\//.test(setting)) return openRedis(setting, options.redisPrefix, options.logger);
  if (/^mongodb(\+srv)?:\/\//.test(setting)) return openMongo(setting);
  throw new Error(
    `NOTIFY_STORAGE must be "memory", a redis:// URL or a mongodb:// URL; got ${redactUrl(setting)}`,
  );
}

import { setTimeout as delay } from 'node:timers/promises';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import type { Logger, StoragePorts } from '../../core/index.js';
import { asSettingError, describeError, StorageSettingError } from './storage-wait.js';

/** Storage and the means to release its connection. */
export interface OpenedStorage {
  storage: StoragePorts;
  close(): Promise<void>;
}

/**
 * The URL with its secrets masked, for logs and `/healthz` (which anyone may read): the password,
 * everything from the `:` after the user name to the last `@`, so that a password holding an `@` or
 * a `/` the operator did not encode is masked whole too (masking more than the password, never
 * less); and the value of every option of its query, which may hold credentials too (MongoDB's
 * `authMechanismProperties=AWS_SESSION_TOKEN:…`, a TLS key's password), its names left to read.
 */
export const redactUrl = (url: string): string => {
  const masked = url.replace(/\/\/([^:@/]*):[\s\S]*@/, '//$1:***@');
  const query = masked.indexOf('?');
  if (query < 0) return masked;
  const options = masked
    .slice(query + 1)
    .split('&')
    .map((option) => (option.includes('=') ? `${option.slice(0, option.indexOf('='))}=***` : option));
  return `${masked.slice(0, query)}?${options.join('&')}`;
};

/** A driver `NOTIFY_STORAGE` selects, loaded; a setting error when it is not installed. */
async function driver<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new StorageSettingError(
      `NOTIFY_STORAGE selects ${name}, whose driver is not installed: npm install ${name}`,
    );
  }
}

/**
 * Makes a driver's client for `url`: what it throws there is a URL it cannot read (a `%` that is no
 * escape, an option it does not know), which waiting does not change.
 */
function settingOf<T>(url: string, make: () => T): T {
  try {
    return make();
  } catch (error) {
    throw new StorageSettingError(
      `NOTIFY_STORAGE is no URL the driver reads: ${describeError(error)}; got ${redactUrl(url)}`,
    );
  }
}

/** How long a stop waits for replies Redis still owes before it drops the connection. */
const closeWaitMs = 1_000;

// Drivers load only when selected, so a memory-only start needs neither.
async function openRedis(
  url: string,
  keyPrefix: string,
  logger: Logger,
  signal: AbortSignal | undefined,
  onRestored: (() => void) | undefined,
): Promise<OpenedStorage> {
  const { createClient, ErrorReply } = await driver('redis', () => import('redis'));
  const { redisStorage } = await import('../../adapters/storage/redis/index.js');
  // Until the first connection this client does not retry: the start-up wait does, and logs each
  // try. Once connected, it reconnects by itself, and commands fail at once while disconnected
  // (503 to callers) instead of queueing until a timeout. A connection whose server vanished
  // without closing it (a host replaced behind its address) answers nothing ever again, and the
  // adapter then sends it nothing: with a ping every 2 seconds a live connection is never idle,
  // and one idle for 8 seconds is dropped and made anew, rather than kept for the kernel's
  // quarter of an hour.
  let connected = false;
  const client = settingOf(url, () =>
    createClient({
      url,
      disableOfflineQueue: true,
      pingInterval: 2_000,
      socket: {
        reconnectStrategy: (retries) => connected && Math.min(100 * 2 ** retries, 2_000),
        connectTimeout: 5_000,
        socketTimeout: 8_000,
      },
    }),
  );
  let down = false;
  client.on('error', (error: unknown) => {
    // A ping the server answered with an error (an ACL without PING, a server loading its data)
    // comes here too, on a connection that stands: it is told, and is no loss.
    if (error instanceof ErrorReply) {
      logger.warn('redis answered a ping with an error', { error: String(error) });
      return;
    }
    if (!connected || down) return;
    down = true;
    logger.error('redis connection lost; reconnecting', { error: String(error) });
  });
  client.on('ready', () => {
    if (!down) return;
    down = false;
    logger.info('redis connection restored');
    onRestored?.();
  });
  // A server that takes the connection and never answers (frozen, or a proxy whose backend is down)
  // would hold `connect` for good: the try's end lets go of the client.
  const giveUp = () => client.destroy();
  signal?.addEventListener('abort', giveUp, { once: true });
  try {
    // Loading the driver may have taken the whole try: an abort before the listener was added.
    signal?.throwIfAborted();
    await client.connect();
  } catch (error) {
    throw asSettingError(signal?.aborted ? signal.reason : error, redactUrl(url));
  } finally {
    signal?.removeEventListener('abort', giveUp);
  }
  connected = true;
  return {
    storage: redisStorage({ client, keyPrefix }),
    close: async () => {
      if (!client.isOpen) return;
      // Replies still awaited (the record of a key's last use, written unawaited) are let in, for a
      // moment only: a server that does not answer (down, frozen) is not waited for. No QUIT: it
      // would wait for one, and marks the client closed before the server answers.
      if (
        client.isReady &&
        (await Promise.race([client.close().then(() => true), delay(closeWaitMs, false, { ref: false })]))
      ) {
        return;
      }
      try {
        client.destroy();
      } catch {
        // The close above let go of the client already: its awaited replies were rejected by this
        // destroy, and the process exits with the socket.
      }
    },
  };
}

async function openMongo(url: string): Promise<OpenedStorage> {
  const { MongoClient } = await driver('mongodb', () => import('mongodb'));
  const { ensureMongoIndexes, mongoStorage } = await import('../../adapters/storage/mongo/index.js');
  const client = settingOf(url, () => new MongoClient(url, { serverSelectionTimeoutMS: 2_000 }));
  try {
    await client.connect();
    const db = client.db();
    await ensureMongoIndexes({ db });
    return { storage: mongoStorage({ db }), close: () => client.close() };
  } catch (error) {
    await client.close().catch(() => undefined);
    throw asSettingError(error, redactUrl(url));
  }
}

/**
 * Checks that `NOTIFY_STORAGE` names a storage: `memory`, a `redis://…` / `rediss://…` URL whose
 * path is empty or a database number, or a `mongodb://…` / `mongodb+srv://…` URL.
 */
export function checkStorageSetting(setting: string): void {
  if (setting === 'memory') return;
  const redis = /^rediss?:\/\//.test(setting);
  if (!redis && !/^mongodb(\+srv)?:\/\//.test(setting)) {
    throw new Error(
      `NOTIFY_STORAGE must be "memory", a redis:// URL or a mongodb:// URL; got ${redactUrl(setting)}`,
    );
  }
  // The MongoDB driver parses its own URLs (several hosts, a `+srv` name), and says what it refuses,
  // but for a password with an `@` left unencoded (it reads what follows the first `@` as the host)
  // or an `@` and a `/` (what follows the `/` as the database): a second `@` says so.
  if (!redis) {
    const beforeQuery = setting.split('?', 1)[0] ?? '';
    if (beforeQuery.split('@').length > 2) {
      throw new Error(
        `NOTIFY_STORAGE: a password with @, / or : must be percent-encoded (%40, %2F, %3A); got ${redactUrl(setting)}`,
      );
    }
    return;
  }
  let url: URL;
  try {
    url = new URL(setting);
  } catch {
    throw new Error(
      `NOTIFY_STORAGE is no valid URL (a password with @, / or : must be percent-encoded); got ${redactUrl(setting)}`,
    );
  }
  if (!/^\/?\d{0,9}$/.test(url.pathname)) {
    throw new Error(
      `NOTIFY_STORAGE: the path of a redis:// URL is a database number (redis://host:6379/2); got ${redactUrl(setting)}`,
    );
  }
  // node-redis reads nothing of a query (`?db=3`): the keys would go to database 0.
  if (url.search !== '' || url.hash !== '') {
    throw new Error(
      `NOTIFY_STORAGE: a redis:// URL takes no query, which the driver ignores (the database is the path: redis://host:6379/3); got ${redactUrl(setting)}`,
    );
  }
}

/** Makes one try at opening the storage that `NOTIFY_STORAGE` names (see {@link checkStorageSetting}). */
export async function openStorage(
  setting: string,
  options: {
    redisPrefix: string;
    logger: Logger;
    signal?: AbortSignal;
    /** Told each time a lost connection to the server is back (Redis): its data may be gone. */
    onRestored?: () => void;
  },
): Promise<OpenedStorage> {
  checkStorageSetting(setting);
  if (/^rediss?:\/\//.test(setting)) {
    return openRedis(setting, options.redisPrefix, options.logger, options.signal, options.onRestored);
  }
  if (/^mongodb(\+srv)?:\/\//.test(setting)) return openMongo(setting);
  return { storage: memoryStorage(), close: async () => {} };
}

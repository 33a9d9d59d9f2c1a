import type { StoragePorts } from '../../../core/adapter-kit.js';
import { redisAdmissionStore } from './redis-admission-store.js';
import type { RedisStorageClient } from './redis-client.js';
import { redisDeliveryStore } from './redis-delivery-store.js';
import { redisDirectoryStore } from './redis-directory-store.js';
import { redisDueWorkStore } from './redis-due-work-store.js';
import { redisFailedCallbackStore } from './redis-failed-callback-store.js';
import { redisIdempotencyStore } from './redis-idempotency-store.js';
import { redisKeys } from './redis-keys.js';
import { redisRateLimitStore } from './redis-rate-limit-store.js';
import { redisRequestStore } from './redis-request-store.js';
import { createRedisRunner } from './redis-runner.js';
import { redisTransportStateStore } from './redis-transport-state-store.js';

export type { RedisStorageClient } from './redis-client.js';
export { isConnectionError } from './storage-unavailable.js';

/** Options of {@link redisStorage}. */
export interface RedisStorageOptions {
  /**
   * A node-redis v5 client (`createClient` from `redis`), built and connected by the caller, who also
   * closes it: the adapter never owns the connection. Create it with `disableOfflineQueue: true` and
   * a `socket.reconnectStrategy`, so that commands fail at once while the server is away (the stores
   * then throw `NotifyError('unavailable')`, a 503 with `Retry-After`) and the client reconnects by
   * itself when it is back; and with `pingInterval` and a `socket.socketTimeout` above it (and a
   * strategy that reconnects after node-redis's `SocketTimeoutError`, which the default one does
   * not), so that a connection whose server vanished without closing it, to which the adapter sends
   * nothing once it stalled, is dropped and made anew (README, "Running several instances").
   */
  client: RedisStorageClient;
  /**
   * Prepended to every key (default `chat-notify:`). Deployments, or tests, that share a Redis server
   * need distinct prefixes, none of which may be the start of another.
   */
  keyPrefix?: string;
  /**
   * Milliseconds the connection may give no reply at all while a command waits (default 5,000)
   * before the commands waiting, and those sent while it stays silent, fail as
   * `NotifyError('unavailable')`: a frozen server, or a network that drops packets without closing
   * the connection, gets `503` answers rather than requests that hang. One reply ends it.
   */
  stallMs?: number;
}

/**
 * Every storage port on one Redis server (7 recommended; 5 or later), shared by any number of
 * instances: compare-and-set writes, claims of due work, idempotency transitions, rate limits and
 * admissions (authentication with both rate limits) are each a single Lua script, so they stay
 * atomic across instances, and rate limits and idempotency expiry read the server's clock. Nothing is cached in the process, so a revoked key is refused on
 * the very next request on every instance. Errors of a lost connection surface as
 * `NotifyError('unavailable')`; any other error propagates unchanged.
 *
 * Single-node Redis only (not Redis Cluster): some scripts reach keys they learn from stored data.
 */
export function redisStorage(options: RedisStorageOptions): StoragePorts {
  // A URL, or options meant for createClient, would fail only at the first command, as a 500.
  if (typeof (options as Partial<RedisStorageOptions> | undefined)?.client?.sendCommand !== 'function') {
    throw new TypeError(
      'redisStorage needs { client }: a node-redis v5 client, made with createClient(...) and connected by you',
    );
  }
  const { stallMs } = options;
  if (stallMs !== undefined && !(Number.isFinite(stallMs) && stallMs > 0 && stallMs <= 2 ** 31 - 1)) {
    throw new RangeError(`stallMs must be a positive number of milliseconds, got ${String(stallMs)}`);
  }
  const redis = createRedisRunner(options.client, stallMs);
  const keys = redisKeys(options.keyPrefix ?? 'chat-notify:');
  return {
    directory: redisDirectoryStore(redis, keys),
    requests: redisRequestStore(redis, keys),
    deliveries: redisDeliveryStore(redis, keys),
    idempotency: redisIdempotencyStore(redis, keys),
    rateLimits: redisRateLimitStore(redis, keys),
    admission: redisAdmissionStore(redis, keys),
    dueWork: redisDueWorkStore(redis, keys),
    transportState: redisTransportStateStore(redis, keys),
    failedCallbacks: redisFailedCallbackStore(redis, keys),
  } satisfies StoragePorts;
}

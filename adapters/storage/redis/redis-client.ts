import type { RedisClientType } from 'redis';

/**
 * The part of a node-redis v5 client that the adapter uses. `sendCommand` has the same signature
 * whatever a client's modules, scripts, RESP version or type mapping, so every `createClient(...)`
 * result (and a client pool) satisfies this type without the adapter naming those parameters.
 */
export type RedisStorageClient = Pick<RedisClientType, 'sendCommand'>;

import { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import { type MongoStorageOptions, mongoStorage } from '../../adapters/storage/mongo/index.js';
import { type RedisStorageOptions, redisStorage } from '../../adapters/storage/redis/index.js';

// Mistakes an embedding application makes when it wires a store: each used to be accepted, and
// every request then failed with a 500 whose cause only the log named.
describe('redisStorage refuses what is not a node-redis client, at creation', () => {
  it.each([
    ['a URL in place of the client', { url: 'redis://127.0.0.1:6379' }],
    ['a URL as the client', { client: 'redis://127.0.0.1:6379' }],
    ['options meant for createClient', { client: { url: 'redis://127.0.0.1:6379' } }],
    ['nothing', undefined],
  ])('%s', (_what, options) => {
    expect(() => redisStorage(options as unknown as RedisStorageOptions)).toThrow(
      new TypeError(
        'redisStorage needs { client }: a node-redis v5 client, made with createClient(...) and connected by you',
      ),
    );
  });

  it('takes a client made by createClient, before it connects', () => {
    expect(() => redisStorage({ client: createClient() })).not.toThrow();
  });
});

describe('mongoStorage refuses what is not a database, at creation', () => {
  it.each([
    ['no database', {}],
    ['a connection string', { db: 'mongodb://127.0.0.1/notify' }],
    ['a client in place of its database', { db: { db: () => ({}) } }],
  ])('%s', (_what, options) => {
    expect(() => mongoStorage(options as unknown as MongoStorageOptions)).toThrow(
      new TypeError("mongoStorage needs { db }: a database of a connected MongoClient, client.db('notify')"),
    );
  });
});

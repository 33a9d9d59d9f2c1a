import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/ports/logger.js';
import { openStorage } from '../../examples/standalone/open-storage.js';
import { redisAvailable, redisUrl } from '../support/redis.js';

const available = await redisAvailable();
if (!available) {
  if (process.env.CI === 'true') throw new Error(`Redis must answer at ${redisUrl} under CI`);
  console.warn(`standalone storage release tests skipped: no Redis answers at ${redisUrl}`);
}

const prefix = `chat-notify-test:${randomUUID()}:`;
afterAll(async () => {
  if (!available) return;
  const client = createClient({ url: redisUrl });
  await client.connect();
  for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
    if (keys.length > 0) await client.unlink(keys);
  }
  client.destroy();
});

describe.skipIf(!available)('releasing the standalone service’s Redis storage', () => {
  it('lets the writes still awaiting their replies finish, on a server that answers', async () => {
    const opened = await openStorage(redisUrl, { redisPrefix: prefix, logger: silentLogger });
    const writes = Array.from({ length: 200 }, (_, i) => opened.storage.transportState.set(`key-${i}`, 'v'));
    await opened.close();
    const settled = await Promise.allSettled(writes);
    expect(settled.filter((write) => write.status === 'rejected')).toEqual([]);
  });
});

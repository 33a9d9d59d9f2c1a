/**
 * The Redis connection of the benchmarks that also run on Redis: `REDIS_URL`, by default the local
 * server. Without a server they run their memory figures only and say so.
 */
import { createClient } from 'redis';

/** A connected client, or null (with a line saying why) when no server answers. */
export async function benchRedis(): Promise<ReturnType<typeof createClient> | null> {
  const client = createClient({
    url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    disableOfflineQueue: true,
  });
  client.on('error', () => undefined);
  return client.connect().then(
    () => client,
    (error: unknown) => {
      console.log(`\nRedis runs skipped: ${String(error)}`);
      return null;
    },
  );
}

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

let prefixes = 0;

/**
 * A key prefix of its own for one measurement, as long as the library's default (`chat-notify:`,
 * 12 characters): every key carries its prefix, so a longer one would count bytes per pending
 * request that a service on the default does not keep (about 80 more with 30,000 pending and a
 * 37-character prefix).
 */
export function benchKeyPrefix(): string {
  prefixes += 1;
  const unique = `${Date.now().toString(36)}${prefixes.toString(36)}`.slice(-8).padStart(8, '0');
  return `cnb${unique}:`;
}

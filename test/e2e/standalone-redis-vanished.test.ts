import { once } from 'node:events';
import { type AddressInfo, createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { createClient } from 'redis';
import { afterEach, describe, expect, it } from 'vitest';
import { demoApiKey } from '../../examples/standalone/demo-seed.js';
import {
  type RedisServerProcess,
  redisServerForTests,
  redisServerProcess,
} from '../support/redis-server-process.js';
import { type StandaloneProcess, startStandaloneProcess } from '../support/standalone-process.js';

const installed = await redisServerForTests('The vanished Redis connection test');

/**
 * A TCP proxy in front of Redis whose connections can vanish: their server end is dropped without
 * the client being told (no FIN, no RST), and what the client sends is swallowed, as when the host
 * behind an address is replaced. New connections reach Redis as before.
 */
interface VanishingProxy {
  port: number;
  vanish(): void;
  close(): Promise<void>;
}

async function vanishingProxy(targetPort: number): Promise<VanishingProxy> {
  const pairs = new Set<{ client: Socket; server: Socket; vanished: boolean }>();
  const proxy: Server = createServer((client) => {
    const server = tcpConnect(targetPort, '127.0.0.1');
    const pair = { client, server, vanished: false };
    pairs.add(pair);
    client.on('data', (data) => {
      if (!pair.vanished) server.write(data);
    });
    server.on('data', (data) => {
      if (!pair.vanished) client.write(data);
    });
    const end = () => {
      client.destroy();
      server.destroy();
      pairs.delete(pair);
    };
    client.on('error', end).on('close', end);
    server.on('error', () => pair.vanished || end()).on('close', () => pair.vanished || end());
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  return {
    port: (proxy.address() as AddressInfo).port,
    vanish() {
      for (const pair of pairs) {
        pair.vanished = true;
        pair.server.destroy();
      }
    },
    async close() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.server.destroy();
      }
      proxy.close();
      await once(proxy, 'close');
    },
  };
}

/** A status read's answer; the first reads after the server vanished wait out the stall (5 s). */
const statusOf = (base: string): Promise<number> =>
  fetch(`${base}/api/notify/status/req_AAAAAAAAAAAAAAAAAAAAAAAA`, {
    headers: { 'x-api-key': demoApiKey },
    signal: AbortSignal.timeout(10_000),
  }).then((response) => response.status);

describe.skipIf(!installed)('the standalone service on a Redis connection whose server vanished', () => {
  let redis: RedisServerProcess | undefined;
  let proxy: VanishingProxy | undefined;
  let host: StandaloneProcess | undefined;
  afterEach(async () => {
    if (host?.child.exitCode === null) host.child.kill('SIGKILL');
    await proxy?.close();
    await redis?.stop();
  });

  it('drops the connection that answers nothing any more and serves again on a new one, within seconds', async () => {
    redis = await redisServerProcess();
    await redis.start();
    proxy = await vanishingProxy(Number(new URL(redis.url).port));
    host = await startStandaloneProcess({ NOTIFY_STORAGE: `redis://127.0.0.1:${proxy.port}` });
    expect(await statusOf(host.base)).toBe(404);

    proxy.vanish();
    const vanished = performance.now();
    const seen: number[] = [];
    for (let status = await statusOf(host.base); status !== 404; status = await statusOf(host.base)) {
      seen.push(status);
      if (performance.now() - vanished > 40_000) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    // Unavailable while the connection is given up on, then served again: well before the kernel
    // would have closed it (about a quarter of an hour).
    expect(seen).toContain(503);
    expect(await statusOf(host.base)).toBe(404);
    expect(performance.now() - vanished).toBeLessThan(30_000);
    expect(host.lines.map((line) => line.message)).toContain('redis connection restored');
  }, 60_000);
});

describe.skipIf(!installed)('the standalone service on Redis as a user whose ACL refuses PING', () => {
  let redis: RedisServerProcess | undefined;
  let host: StandaloneProcess | undefined;
  afterEach(async () => {
    if (host?.child.exitCode === null) host.child.kill('SIGKILL');
    await redis?.stop();
  });

  it('tells the refused pings apart from a lost connection, and still logs the loss when it comes', async () => {
    redis = await redisServerProcess();
    await redis.start();
    const admin = createClient({ url: redis.url });
    await admin.connect();
    await admin.sendCommand(['ACL', 'SETUSER', 'svc', 'on', '>svc-pass', '~*', '+@all', '-ping']);
    admin.destroy();
    const port = new URL(redis.url).port;
    host = await startStandaloneProcess({ NOTIFY_STORAGE: `redis://svc:svc-pass@127.0.0.1:${port}` });
    await host.next((line) => line.message === 'redis answered a ping with an error', 10_000);
    expect(await statusOf(host.base)).toBe(404);
    expect(host.lines.map((line) => line.message)).not.toContain('redis connection lost; reconnecting');
    await redis.stop();
    await host.next((line) => line.message === 'redis connection lost; reconnecting', 10_000);
  }, 30_000);
});

/**
 * HTTP throughput of the API mounted in Express and in Koa, each against a bare app of the same
 * framework, in the same run, that parses the same JSON and answers the same body: the share of the
 * bare framework that the library keeps. autocannon, 20 connections, memory storage and the inbox;
 * then the same on Redis, as a share of memory. Requests per second and p99 latency are printed.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import express from 'express';
import Koa from 'koa';
import { createClient } from 'redis';
import { inboxTransport } from '../adapters/chat/inbox/index.js';
import { memoryStorage } from '../adapters/storage/memory/index.js';
import { redisStorage } from '../adapters/storage/redis/index.js';
import { createNotifier, type Notifier } from '../core/notifier.js';
import type { StoragePorts } from '../core/ports/storage.js';
import { notifyRouter } from '../hosts/express/index.js';
import { notifyMiddleware } from '../hosts/koa/index.js';
import { testKeys, testSeed } from '../test/support/test-seed.js';
import { saveFigures, sized } from './options.js';

const seconds = sized(10, 1);
const connections = 20;
const unlimited = { burst: 1e12, perSecond: 1e12 };
// A retention short enough that a long run does not measure a growing heap.
const retention = 60_000;

const sendBody = JSON.stringify({ user_emails: ['bob@acme.test'], message: 'Deploy *v2* finished' });
const interactiveBody = JSON.stringify({
  user_emails: ['bob@acme.test'],
  message: 'Approve?',
  response_request: {
    options: [
      { text: 'Yes', value: 'yes' },
      { text: 'No', value: 'no' },
    ],
    timeout_minutes: 30,
  },
});

type Host = 'express' | 'koa';

/** An app under test: the library mounted, or the bare framework answering the same bodies. */
type AppFactory = () => (
  req: import('node:http').IncomingMessage,
  res: import('node:http').ServerResponse,
) => void;

function libraryApp(host: Host, notifier: Notifier): AppFactory {
  return () => {
    if (host === 'express') {
      const app = express();
      app.use(notifyRouter(notifier));
      return app;
    }
    const app = new Koa();
    app.use(notifyMiddleware(notifier));
    return app.callback();
  };
}

/** Parses the JSON body of a send as the library does, and answers the bodies the library answers. */
function bareApp(host: Host, sendAnswer: string, statusAnswer: string): AppFactory {
  return () => {
    if (host === 'express') {
      const app = express();
      app.post('/api/notify', express.json(), (_req, res) => {
        res.type('application/json').send(sendAnswer);
      });
      app.get('/api/notify/status/:id', (_req, res) => {
        res.type('application/json').send(statusAnswer);
      });
      return app;
    }
    const app = new Koa();
    app.use(async (ctx) => {
      if (ctx.method === 'POST' && ctx.path === '/api/notify') {
        const chunks: Buffer[] = [];
        for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
        JSON.parse(Buffer.concat(chunks).toString('utf8'));
        ctx.type = 'application/json';
        ctx.body = sendAnswer;
      } else if (ctx.method === 'GET' && ctx.path.startsWith('/api/notify/status/')) {
        ctx.type = 'application/json';
        ctx.body = statusAnswer;
      }
    });
    return app.callback();
  };
}

async function listen(factory: AppFactory): Promise<{ url: string; server: Server }> {
  const server = createServer(factory());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** Requests per second and p99 latency of one path. */
interface Load {
  requestsPerSecond: number;
  p99Ms: number;
  non2xx: number;
}

async function load(url: string, path: 'send' | 'status', statusPath: string): Promise<Load> {
  const result = await autocannon({
    url: `${url}${path === 'send' ? '/api/notify' : statusPath}`,
    connections,
    duration: seconds,
    ...(path === 'send'
      ? {
          method: 'POST',
          headers: { 'x-api-key': testKeys.alice, 'content-type': 'application/json' },
          body: sendBody,
        }
      : { method: 'GET', headers: { 'x-api-key': testKeys.alice } }),
  });
  return { requestsPerSecond: result.requests.average, p99Ms: result.latency.p99, non2xx: result.non2xx };
}

async function notifierOn(
  storage: StoragePorts,
): Promise<{ notifier: Notifier; statusPath: string; statusAnswer: string; sendAnswer: string }> {
  const notifier = createNotifier({
    storage,
    transports: [inboxTransport()],
    rateLimits: { perKey: unlimited, perOrganization: unlimited },
    retention,
  });
  await notifier.seed(testSeed);
  const post = (body: string) =>
    notifier.handle({
      method: 'POST',
      url: '/api/notify',
      headers: { 'x-api-key': testKeys.alice, 'content-type': 'application/json' },
      body: [body],
      clientAddress: '127.0.0.1',
    });
  const sendAnswer = (await post(sendBody))?.body ?? '';
  const { request_id: requestId } = JSON.parse((await post(interactiveBody))?.body ?? '{}') as {
    request_id: string;
  };
  const statusPath = `/api/notify/status/${requestId}`;
  const statusAnswer =
    (
      await notifier.handle({
        method: 'GET',
        url: statusPath,
        headers: { 'x-api-key': testKeys.alice },
        body: null,
        clientAddress: '127.0.0.1',
      })
    )?.body ?? '';
  return { notifier, statusPath, statusAnswer, sendAnswer };
}

const row = (name: string, measured: Load, against?: Load): string =>
  `${name.padEnd(44)} ${measured.requestsPerSecond.toFixed(0).padStart(8)} req/s  p99 ${String(measured.p99Ms).padStart(4)} ms${
    against
      ? `  ${(measured.requestsPerSecond / against.requestsPerSecond).toFixed(2).padStart(5)} of ${'bare'}`
      : ''
  }${measured.non2xx > 0 ? `  (${measured.non2xx} non-2xx!)` : ''}`;

console.log(
  `autocannon, ${connections} connections, ${seconds} s per run; bare and library apps alternate.\n`,
);
const figures: Record<string, Record<string, Load | number>> = {};
const memory = await notifierOn(memoryStorage());
for (const host of ['express', 'koa'] as const) {
  const bare = await listen(bareApp(host, memory.sendAnswer, memory.statusAnswer));
  const library = await listen(libraryApp(host, memory.notifier));
  const results: Record<string, Load | number> = {};
  for (const path of ['send', 'status'] as const) {
    const bareLoad = await load(bare.url, path, memory.statusPath);
    const libraryLoad = await load(library.url, path, memory.statusPath);
    results[`bare ${path}`] = bareLoad;
    results[`library ${path}`] = libraryLoad;
    results[`${path} share of bare`] = libraryLoad.requestsPerSecond / bareLoad.requestsPerSecond;
    console.log(row(`${host}, bare, ${path}`, bareLoad));
    console.log(row(`${host}, chat-notify (memory), ${path}`, libraryLoad, bareLoad));
  }
  figures[host] = results;
  bare.server.close();
  library.server.closeAllConnections();
  library.server.close();
}
await memory.notifier.stop();

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const client = createClient({ url: redisUrl, disableOfflineQueue: true });
client.on('error', () => undefined);
const reachable = await client.connect().then(
  () => true,
  (error: unknown) => {
    console.log(`\nRedis runs skipped: ${String(error)}`);
    return false;
  },
);
if (reachable) {
  const keyPrefix = `chat-notify-bench-http:${Date.now()}:`;
  const onRedis = await notifierOn(redisStorage({ client, keyPrefix }));
  const library = await listen(libraryApp('express', onRedis.notifier));
  const results: Record<string, Load | number> = {};
  console.log('');
  for (const path of ['send', 'status'] as const) {
    const redisLoad = await load(library.url, path, onRedis.statusPath);
    const memoryLoad = figures.express?.[`library ${path}`] as Load;
    results[`library ${path}`] = redisLoad;
    results[`${path} share of memory`] = redisLoad.requestsPerSecond / memoryLoad.requestsPerSecond;
    console.log(
      `${row(`express, chat-notify (Redis), ${path}`, redisLoad)}  ${(redisLoad.requestsPerSecond / memoryLoad.requestsPerSecond).toFixed(2)} of memory`,
    );
  }
  figures.redis = results;
  library.server.closeAllConnections();
  library.server.close();
  await onRedis.notifier.stop();
  for await (const keys of client.scanIterator({ MATCH: `${keyPrefix}*`, COUNT: 1000 })) {
    if (keys.length > 0) await client.unlink(keys);
  }
  client.destroy();
}
saveFigures({ seconds, connections, results: figures });

/**
 * HTTP throughput of the API mounted in Express and in Koa, each against a bare app of the same
 * framework, in the same run, that parses the same JSON and answers the same body: the share of the
 * bare framework that the library keeps. autocannon, 20 connections, memory storage and the inbox;
 * then the same on Redis, as a share of memory. The library is the built package, as an application
 * installs it (`built-package.ts`). Requests per second and p99 latency are printed.
 */

import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import express from 'express';
import Koa from 'koa';
import type { Notifier } from '../core/notifier.js';
import type { StoragePorts } from '../core/ports/storage.js';
import { interactiveBody, plainBody, post, readStatus } from '../test/support/api-requests.js';
import { testKeys } from '../test/support/test-seed.js';
import { benchNotifier } from './bench-notifier.js';
import {
  createNotifier,
  inboxTransport,
  memoryStorage,
  notifyMiddleware,
  notifyRouter,
  redisStorage,
} from './built-package.js';
import { saveFigures, settledHeap, sized } from './options.js';
import { benchKeyPrefix, benchRedis } from './redis-connection.js';

const seconds = sized(5, 0.4);
/** autocannon counts requests per sample; a quick run's short runs need samples shorter than a second. */
const sampleMs = sized(1000, 100);
/** Bare and library runs alternate this many times per path; the round with the median share is shown. */
const rounds = sized(3, 1);
const connections = 20;
// A retention well inside one run, so that a run measures the steady state of a service that keeps
// a bounded number of finished sends (the memory store's sweeps included), not a heap that grows
// for the whole run and makes each collection dearer than the last.
const retention = 2_000;

const sendBody = plainBody();
const interactive = interactiveBody();

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

/** Requests per second, p99 latency and CPU per request of one path. */
interface Load {
  requestsPerSecond: number;
  p99Ms: number;
  non2xx: number;
  /**
   * This process's CPU time (user and system, every thread) per request answered, load generator
   * included: what the app costs per request. Unlike requests a second, it leaves out the time the
   * process waited for a processor that a busy machine gave to others.
   */
  cpuMicroseconds: number;
}

async function load(url: string, path: 'send' | 'status', statusPath: string): Promise<Load> {
  const cpuBefore = process.cpuUsage();
  const result = await autocannon({
    url: `${url}${path === 'send' ? '/api/notify' : statusPath}`,
    connections,
    duration: seconds,
    sampleInt: sampleMs,
    ...(path === 'send'
      ? {
          method: 'POST',
          headers: { 'x-api-key': testKeys.alice, 'content-type': 'application/json' },
          body: sendBody,
        }
      : { method: 'GET', headers: { 'x-api-key': testKeys.alice } }),
  });
  const cpu = process.cpuUsage(cpuBefore);
  return {
    requestsPerSecond: (result.requests.average * 1000) / sampleMs,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    cpuMicroseconds: (cpu.user + cpu.system) / Math.max(1, result.requests.total),
  };
}

async function notifierOn(
  storage: StoragePorts,
): Promise<{ notifier: Notifier; statusPath: string; statusAnswer: string; sendAnswer: string }> {
  const notifier = await benchNotifier(storage, { retention }, { createNotifier, inboxTransport });
  const sendAnswer = (await post(notifier, sendBody))?.body ?? '';
  const { request_id: requestId } = JSON.parse((await post(notifier, interactive))?.body ?? '{}') as {
    request_id: string;
  };
  const statusPath = `/api/notify/status/${requestId}`;
  const statusAnswer = (await readStatus(notifier, requestId))?.body ?? '';
  return { notifier, statusPath, statusAnswer, sendAnswer };
}

const row = (name: string, measured: Load, against?: Load): string =>
  `${name.padEnd(44)} ${measured.requestsPerSecond.toFixed(0).padStart(8)} req/s  p99 ${String(measured.p99Ms).padStart(4)} ms  ${measured.cpuMicroseconds.toFixed(1).padStart(5)} µs CPU${
    against
      ? `  ${(measured.requestsPerSecond / against.requestsPerSecond).toFixed(2).padStart(5)} of bare`
      : ''
  }${measured.non2xx > 0 ? `  (${measured.non2xx} non-2xx!)` : ''}`;

console.log(
  `autocannon in this process, ${connections} connections, ${seconds} s per run; the bare and the library app\n` +
    `alternate ${rounds} times per path and the round with the median share is shown (shares of every round\n` +
    "in brackets). µs CPU: the process's CPU time per request answered, the load generator's included.\n",
);
const figures: Record<string, Record<string, Load | number>> = {};
const memory = await notifierOn(memoryStorage());
for (const host of ['express', 'koa'] as const) {
  const bare = await listen(bareApp(host, memory.sendAnswer, memory.statusAnswer));
  const library = await listen(libraryApp(host, memory.notifier));
  const results: Record<string, Load | number> = {};
  for (const path of ['send', 'status'] as const) {
    const pairs: { bare: Load; library: Load; share: number }[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const bareLoad = await load(bare.url, path, memory.statusPath);
      const libraryLoad = await load(library.url, path, memory.statusPath);
      pairs.push({
        bare: bareLoad,
        library: libraryLoad,
        share: libraryLoad.requestsPerSecond / bareLoad.requestsPerSecond,
      });
    }
    const shares = pairs.map((pair) => pair.share.toFixed(2)).join(', ');
    const median = [...pairs].sort((a, b) => a.share - b.share)[Math.floor(pairs.length / 2)];
    if (!median) throw new Error('no round was run');
    results[`bare ${path}`] = median.bare;
    results[`library ${path}`] = median.library;
    results[`${path} share of bare`] = median.share;
    console.log(row(`${host}, bare, ${path}`, median.bare));
    console.log(`${row(`${host}, chat-notify (memory), ${path}`, median.library, median.bare)}  [${shares}]`);
  }
  figures[host] = results;
  bare.server.close();
  library.server.closeAllConnections();
  library.server.close();
}
await memory.notifier.stop();

const client = await benchRedis();
if (client) {
  const keyPrefix = benchKeyPrefix();
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

/** Sends `count` interactive requests in process, 20 at a time, and leaves them pending. */
async function fill(notifier: Notifier, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      for (; next < count; next += 1) {
        await post(notifier, interactive);
      }
    }),
  );
}

// How the cost of a call grows with what the store holds: the same runs on Express and memory with
// more and more pending interactive requests (each with its inbox copy) already stored.
console.log('\ngrowth: express, memory, with N pending interactive requests already stored');
const growth: Record<string, Record<string, Load | number>> = {};
let baseline: Record<string, Load> | undefined;
for (const stored of sized([0, 100_000, 1_000_000], [0, 500])) {
  const filled = await notifierOn(memoryStorage());
  await fill(filled.notifier, stored);
  // A full collection first: the runs measure a service that holds these requests, not the
  // collection of everything that filling it allocated.
  settledHeap();
  const library = await listen(libraryApp('express', filled.notifier));
  const results: Record<string, Load | number> = {};
  for (const path of ['send', 'status'] as const) {
    const measured = await load(library.url, path, filled.statusPath);
    results[path] = measured;
    const first = baseline?.[path];
    if (first) results[`${path} share of empty`] = measured.requestsPerSecond / first.requestsPerSecond;
    console.log(
      `${row(`${stored.toLocaleString('en')} stored, ${path}`, measured)}${first ? `  ${(measured.requestsPerSecond / first.requestsPerSecond).toFixed(2)} of empty` : ''}`,
    );
  }
  baseline ??= { send: results.send as Load, status: results.status as Load };
  growth[String(stored)] = results;
  library.server.closeAllConnections();
  library.server.close();
  await filled.notifier.stop();
}
saveFigures({ seconds, connections, results: figures, growth });

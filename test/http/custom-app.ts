import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Koa from 'koa';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { createNotifier, type Notifier } from '../../core/notifier.js';
import type { ChatTransport } from '../../core/ports/chat-transport.js';
import { notifyRouter } from '../../hosts/express/index.js';
import { notifyMiddleware } from '../../hosts/koa/index.js';
import { type ManualClock, manualClock } from '../support/manual-clock.js';
import { testKeys, testSeed } from '../support/test-seed.js';
import type { HostKind } from './harness.js';

/**
 * Applications built here rather than with the harness: the harness's applications cannot put a body
 * parser before the router, nor slow a delivery down on purpose.
 */
export interface CustomApp {
  origin: string;
  /** Where the API is mounted: `${origin}/chat`, or `origin` with `mountAtRoot`. */
  baseUrl: string;
  clock: ManualClock;
  notifier: Notifier;
  keys: typeof testKeys;
  close(): Promise<void>;
}

/** How the application around the API is built. */
export interface CustomAppOptions {
  /** Mount a JSON body parser before the API (a mistake the hosts must report loudly). */
  bodyParserFirst?: boolean;
  /** Mount the API at the application's root instead of `/chat`: it then sees every request first. */
  mountAtRoot?: boolean;
  /** Wraps the inbox transport (to slow deliveries down, for instance). */
  wrapTransport?: (transport: ChatTransport) => ChatTransport;
  /**
   * A request-timeout middleware before the API (as connect-timeout or a Koa race is), answering
   * `503` itself once this many milliseconds have passed without an answer.
   */
  answerTimeoutMs?: number;
}

const timedOut = { error: 'timeout' };

/**
 * A minimal Koa body parser: reads the whole body, once, and sets `ctx.request.body`; an empty object
 * on a request without a JSON body, as koa-bodyparser does.
 */
const koaJsonParser: Koa.Middleware = async (ctx, next) => {
  const request = ctx.request as { body?: unknown };
  if (ctx.is('application/json') && request.body === undefined) {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    try {
      request.body = JSON.parse(text);
    } catch {
      request.body = text;
    }
  }
  request.body ??= {};
  await next();
};

/** Express 4's `express.json()` sets an empty body on every request it does not parse; Express 5's does not. */
const emptyBodyAsExpress4: express.RequestHandler = (req, _res, next) => {
  req.body ??= {};
  next();
};

const mountPoint = (options: CustomAppOptions): string => (options.mountAtRoot ? '' : '/chat');

function expressApp(notifier: Notifier, options: CustomAppOptions): RequestListener {
  const app = express();
  if (options.bodyParserFirst) app.use(express.json(), emptyBodyAsExpress4);
  const { answerTimeoutMs } = options;
  if (answerTimeoutMs !== undefined) {
    app.use((_req, res, next) => {
      const timer = setTimeout(() => res.status(503).json(timedOut), answerTimeoutMs);
      res.on('finish', () => clearTimeout(timer));
      next();
    });
  }
  app.use(mountPoint(options) || '/', notifyRouter(notifier));
  // The application's own routes, one of them inside the API's mount point, with a parser after the API.
  app.get('/chat/custom', (_req, res) => {
    res.json({ custom: true });
  });
  app.post('/echo', express.json(), (req, res) => {
    res.json({ echoed: req.body as unknown });
  });
  return app;
}

function koaApp(notifier: Notifier, options: CustomAppOptions): RequestListener {
  const app = new Koa();
  if (options.bodyParserFirst) app.use(koaJsonParser);
  const { answerTimeoutMs } = options;
  if (answerTimeoutMs !== undefined) {
    app.use(async (ctx, next) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          ctx.status = 503;
          ctx.body = timedOut;
          resolve();
        }, answerTimeoutMs);
      });
      await Promise.race([next(), late]);
      clearTimeout(timer);
    });
  }
  app.use(notifyMiddleware(notifier, { prefix: mountPoint(options) }));
  app.use(async (ctx, next) => {
    if (ctx.method === 'GET' && ctx.path === '/chat/custom') {
      ctx.body = { custom: true };
      return;
    }
    await next();
  });
  app.use(koaJsonParser);
  app.use(async (ctx) => {
    if (ctx.method === 'POST' && ctx.path === '/echo') {
      ctx.body = { echoed: (ctx.request as { body?: unknown }).body };
    }
  });
  return app.callback();
}

/** Starts an application of the given kind with the API at `/chat` (or the root), on memory storage and the inbox. */
export async function startCustomApp(kind: HostKind, options: CustomAppOptions = {}): Promise<CustomApp> {
  const clock = manualClock();
  const storage = memoryStorage({ clock });
  const inbox = inboxTransport({ clock });
  const notifier = createNotifier({
    storage,
    transports: [options.wrapTransport ? options.wrapTransport(inbox) : inbox],
    clock,
  });
  await notifier.seed(testSeed);
  const listener = kind === 'express' ? expressApp(notifier, options) : koaApp(notifier, options);
  const server: Server = createServer(listener);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    baseUrl: `${origin}${mountPoint(options)}`,
    clock,
    notifier,
    keys: testKeys,
    async close() {
      server.closeAllConnections();
      server.close();
      await notifier.stop();
    },
  };
}

/** A promise with its resolver, to hold a delivery until the test lets it go. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/**
 * Wraps a transport so that each delivery waits for `held` to open, calling `started` first and
 * `delivered` once the copy is out: stands in for a platform that makes a send slow.
 */
export const heldDeliveries =
  (held: Promise<void>, hooks: { started?: () => void; delivered?: () => void } = {}) =>
  (inner: ChatTransport): ChatTransport => ({
    platform: inner.platform,
    routes: inner.routes,
    address: (user, organization) => inner.address(user, organization),
    connect: (sink) => inner.connect(sink),
    update: (delivery, ref) => inner.update(delivery, ref),
    async deliver(delivery) {
      hooks.started?.();
      await held;
      const ref = await inner.deliver(delivery);
      hooks.delivered?.();
      return ref;
    },
  });

import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { httpCallbacks } from '../../adapters/callbacks/index.js';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { errorResponse } from '../../core/http/responses.js';
import { createNotifier, type Notifier } from '../../core/notifier.js';
import type { Logger } from '../../core/ports/logger.js';
import { notifyRouter } from '../../hosts/express/index.js';
import type { StandaloneConfig } from './config.js';
import { demoSeed } from './demo-seed.js';
import { openStorage } from './open-storage.js';

/** A running standalone service. */
export interface Standalone {
  notifier: Notifier;
  server: Server;
  /** The port actually listened on (useful with `PORT=0`). */
  port: number;
  close(): Promise<void>;
}

async function loadSeed(path: string | undefined): Promise<unknown> {
  if (path === undefined) return demoSeed;
  return JSON.parse(await readFile(path, 'utf8'));
}

/** Starts the service: memory storage and the local inbox by default, the API and the inbox at the root. */
export async function startStandalone(config: StandaloneConfig, logger: Logger): Promise<Standalone> {
  const opened = await openStorage(config.NOTIFY_STORAGE, {
    redisPrefix: config.NOTIFY_REDIS_PREFIX,
    logger,
  });
  const { storage } = opened;
  const allowInsecure = config.NOTIFY_ALLOW_INSECURE_CALLBACKS;
  if (allowInsecure) {
    logger.warn(
      'NOTIFY_ALLOW_INSECURE_CALLBACKS is on: callbacks may go to http: and to loopback or private addresses. Never use this in production.',
    );
  }
  const notifier = createNotifier({
    storage,
    transports: [inboxTransport({ store: storage.inbox })],
    callbacks: httpCallbacks({ allowInsecure }),
    rateLimits: {
      perKey: config.NOTIFY_RATE_LIMIT_PER_KEY,
      perOrganization: config.NOTIFY_RATE_LIMIT_PER_ORGANIZATION,
    },
    logger,
  });
  await notifier.seed(await loadSeed(config.NOTIFY_SEED));

  const app = express();
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.use(notifyRouter(notifier));
  app.use((req, res) => {
    const notFound = errorResponse(404, `No endpoint at ${req.path}`);
    res.status(notFound.status).set(notFound.headers).end(notFound.body);
  });

  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, resolve);
  });
  notifier.start();
  return {
    notifier,
    server,
    port: (server.address() as AddressInfo).port,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await notifier.stop();
      await opened.close();
    },
  };
}

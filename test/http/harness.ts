import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Koa from 'koa';
import { type InboxTransportOptions, inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { createNotifier, type Notifier, type NotifierOptions } from '../../core/notifier.js';
import type { Logger } from '../../core/ports/logger.js';
import type { StoragePorts } from '../../core/ports/storage.js';
import type { RateLimitSettings } from '../../core/rate-limit/settings.js';
import { notifyRouter } from '../../hosts/express/index.js';
import { notifyMiddleware } from '../../hosts/koa/index.js';
import { type FlakyTransport, flakyTransport } from '../support/flaky-transport.js';
import { type ManualClock, manualClock } from '../support/manual-clock.js';
import { testKeys, testSeed } from '../support/test-seed.js';

/** The two hosts every HTTP test runs against. */
export const hostKinds = ['express', 'koa'] as const;
export type HostKind = (typeof hostKinds)[number];

/** Options of {@link startTestHost}. */
export interface TestHostOptions {
  rateLimits?: Partial<RateLimitSettings>;
  /**
   * Where the API is mounted in the application (default `/chat`), to prove mounting anywhere works;
   * `''` mounts it at the root.
   */
  mount?: string;
  /** Storage other than the default memory storage (Redis, say); the caller releases it. */
  storage?: StoragePorts;
  trustProxy?: NotifierOptions['trustProxy'];
  logger?: Logger;
  /** How long finished sends are kept; the notifier's default (30 days) when absent. */
  retention?: NotifierOptions['retention'];
  /** The inbox's `allowedHosts`; its default (localhost and IP addresses) when absent. */
  inboxAllowedHosts?: InboxTransportOptions['allowedHosts'];
}

/** A running application with the API mounted, on memory storage and the local inbox, in virtual time. */
export interface TestHost {
  kind: HostKind;
  /** `http://127.0.0.1:<port><mount>`: append `/api/notify`, `/inbox/api/...`. */
  baseUrl: string;
  /** `http://127.0.0.1:<port>`: the application's root, outside the mount. */
  origin: string;
  /** Drives rate-limit refills, idempotency expiry and timeouts; starts at 2026-01-01T00:00:00Z. */
  clock: ManualClock;
  notifier: Notifier;
  storage: StoragePorts;
  /** The inbox transport, able to fail deliveries to chosen recipients. */
  inbox: FlakyTransport;
  /** Plaintext API keys: alice (acme admin), bob (acme member), gina (globex admin). */
  keys: typeof testKeys;
  /** Runs the timeouts and callbacks due at the clock's current time. */
  runDueWork(): Promise<number>;
  close(): Promise<void>;
}

function expressApp(notifier: Notifier, mount: string) {
  const app = express();
  app.use(mount || '/', notifyRouter(notifier));
  app.get('/outside', (_req, res) => {
    res.json({ outside: true });
  });
  return app;
}

function koaApp(notifier: Notifier, mount: string) {
  const app = new Koa();
  app.use(notifyMiddleware(notifier, { prefix: mount }));
  app.use(async (ctx) => {
    if (ctx.path === '/outside') ctx.body = { outside: true };
  });
  return app.callback();
}

/** Starts an application of the given kind on an ephemeral port of 127.0.0.1. */
export async function startTestHost(kind: HostKind, options: TestHostOptions = {}): Promise<TestHost> {
  const clock = manualClock();
  const storage = options.storage ?? memoryStorage({ clock });
  const inbox = flakyTransport(
    inboxTransport({
      clock,
      ...(options.inboxAllowedHosts === undefined ? {} : { allowedHosts: options.inboxAllowedHosts }),
    }),
  );
  const notifier = createNotifier({
    storage,
    transports: [inbox],
    clock,
    ...(options.rateLimits ? { rateLimits: options.rateLimits } : {}),
    trustProxy: options.trustProxy,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.retention === undefined ? {} : { retention: options.retention }),
  });
  await notifier.seed(testSeed);
  const mount = options.mount ?? '/chat';
  const server: Server = createServer(
    kind === 'express' ? expressApp(notifier, mount) : koaApp(notifier, mount),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    kind,
    baseUrl: `${origin}${mount}`,
    origin,
    clock,
    notifier,
    storage,
    inbox,
    keys: testKeys,
    runDueWork: () => notifier.runDueWork(),
    async close() {
      server.closeAllConnections();
      server.close();
      await notifier.stop();
    },
  };
}

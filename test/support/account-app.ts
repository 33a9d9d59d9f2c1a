import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Koa from 'koa';
import { type AccountPages, accountPages, type ResolveUser } from '../../account/index.js';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import type { TrustProxy } from '../../core/http/client-address.js';
import { createNotifier, type Notifier } from '../../core/notifier.js';
import type { Clock } from '../../core/ports/clock.js';
import type { StoragePorts } from '../../core/ports/storage.js';
import { scopedTransportState } from '../../core/transport-state/scoped-state.js';
import { notifyRouter } from '../../hosts/express/index.js';
import { notifyMiddleware } from '../../hosts/koa/index.js';
import { testSeed } from './test-seed.js';

/** Where the application mounts the account pages. */
export const accountMount = '/app';

/** The application's own sign-in cookie: the signed-in user's email (a test stand-in for a real session). */
export const appUserCookie = 'app_user';

/** An application of its own (Express or Koa) with the API at the root and the account pages under {@link accountMount}. */
export interface AccountTestApp {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** `origin` + {@link accountMount}. */
  pagesUrl: string;
  notifier: Notifier;
  close(): Promise<void>;
}

/** Options of {@link startAccountApp}. */
export interface AccountTestAppOptions {
  storage?: StoragePorts;
  clock?: Clock;
  trustProxy?: TrustProxy;
  /** The application's own sign-in page, where signed-out visitors of the pages go. */
  signInPath?: string;
  /** Leaves `basePath` out, for the pages to learn their mount from the host. */
  mountFromHost?: boolean;
}

/**
 * The embedding application's sign-in, as `resolveUser` sees it: the user of the `app_user` cookie,
 * looked up in the directory.
 */
function resolveFromCookie(storage: StoragePorts): ResolveUser {
  return async (request) => {
    const email = request.cookies[appUserCookie];
    // Nobody, as an application's sign-in may say it: undefined (or null).
    if (email === undefined) return undefined;
    const user = (await storage.directory.listUsers()).find(
      (candidate) => candidate.email === decodeURIComponent(email),
    );
    if (user === undefined) return null;
    return {
      userId: user.id,
      organizationId: user.organizationId,
      admin: user.role === 'admin',
      name: user.name,
      email: user.email,
    };
  };
}

function expressApp(notifier: Notifier, pages: AccountPages) {
  const app = express();
  app.use(notifyRouter(notifier));
  app.use(accountMount, notifyRouter(pages));
  return app;
}

function koaApp(notifier: Notifier, pages: AccountPages) {
  const app = new Koa();
  app.use(notifyMiddleware(notifier));
  app.use(notifyMiddleware(pages, { prefix: accountMount }));
  return app.callback();
}

/** Starts the application on an ephemeral port of 127.0.0.1. */
export async function startAccountApp(
  kind: 'express' | 'koa',
  options: AccountTestAppOptions = {},
): Promise<AccountTestApp> {
  const storage = options.storage ?? memoryStorage(options.clock ? { clock: options.clock } : {});
  const notifier = createNotifier({
    storage,
    transports: [inboxTransport()],
    ...(options.clock ? { clock: options.clock } : {}),
  });
  await notifier.seed(testSeed);
  const pages = accountPages({
    notifier,
    state: scopedTransportState(storage.transportState, 'account'),
    resolveUser: resolveFromCookie(storage),
    ...(options.mountFromHost ? {} : { basePath: accountMount }),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.trustProxy === undefined ? {} : { trustProxy: options.trustProxy }),
    ...(options.signInPath === undefined ? {} : { signInPath: options.signInPath }),
  });
  const server: Server = createServer(
    kind === 'express' ? expressApp(notifier, pages) : koaApp(notifier, pages),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    pagesUrl: `${origin}${accountMount}`,
    notifier,
    async close() {
      server.closeAllConnections();
      server.close();
      await notifier.stop();
    },
  };
}

/** A signed-in browser of the application, as far as the JSON API is concerned: its cookies and CSRF token. */
export interface AccountBrowser {
  /** The `Cookie` header: the application's sign-in and the CSRF anchor. */
  cookie: string;
  /** The `X-CSRF-Token` of the JSON API's posts. */
  csrfToken: string;
}

/** Signs `email` in to the application and fetches a CSRF token, keeping the anchor cookie it sets. */
export async function signedInBrowser(app: AccountTestApp, email: string): Promise<AccountBrowser> {
  const signIn = `${appUserCookie}=${encodeURIComponent(email)}`;
  const response = await fetch(`${app.pagesUrl}/account/api/session`, { headers: { cookie: signIn } });
  if (response.status !== 200) throw new Error(`session of ${email}: ${response.status}`);
  const anchor = (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const { csrf_token: csrfToken } = (await response.json()) as { csrf_token: string };
  return { cookie: `${signIn}; ${anchor}`, csrfToken };
}

import {
  checkMethodsOption,
  checkNumberOption,
  clockMethods,
  createHttpHandler,
  loggerMethods,
  type TransportStateStore,
} from '../core/adapter-kit.js';
import {
  type Clock,
  type HttpHandler,
  type Logger,
  type Notifier,
  silentLogger,
  systemClock,
  type TrustProxy,
} from '../core/index.js';
import type { ResolveUser } from './account-user.js';
import { auditLog } from './audit-log.js';
import { csrfTokens } from './csrf.js';
import { pageRoutes } from './routes/account-page-routes.js';
import { jsonRoutes } from './routes/json-routes.js';
import type { PagesContext } from './routes/route-kit.js';
import { signInRoutes } from './routes/sign-in-routes.js';
import type { PasswordSignIn } from './sign-in/password-sign-in.js';

/** Options of {@link accountPages}. */
export interface AccountPagesOptions {
  /**
   * The notifier whose keys are managed (`notifier.apiKeys`); with its `failedCallbacks`, the
   * organization's admins also see and replay its failed callbacks (`/admin/api/failed-callbacks`).
   */
  notifier: Pick<Notifier, 'apiKeys'> & Partial<Pick<Notifier, 'failedCallbacks'>>;
  /**
   * Where the audit record (and, without `csrfSecret`, the CSRF secret) lives: a namespaced view of
   * the storage's transport state, e.g. `scopedTransportState(storage.transportState, 'account')`,
   * so that every instance on the same storage shares them.
   */
  state: TransportStateStore;
  /**
   * Who is signed in: the embedding application's own sign-in. Optional with `signIn`, whose
   * `resolveUser` is then used.
   */
  resolveUser?: ResolveUser;
  /** The library's own email-and-password sign-in: adds `/signin` and `/signout`, and the "Sign out" button. */
  signIn?: PasswordSignIn;
  /**
   * Where a signed-out visitor of a page is sent, with `?next=<the page>`: the application's sign-in
   * page. `<basePath>/signin` with `signIn`; without either, such a visit gets a 401 page.
   */
  signInPath?: string;
  /**
   * Where the pages are mounted, for links and redirects: `'/settings'` for `app.use('/settings', …)`.
   * By default, where the host says they are mounted (Express's `req.baseUrl`, the Koa host's
   * `prefix`); give it when a proxy or another router in front changes the path.
   */
  basePath?: string;
  /**
   * `Secure` on the cookies: `true` always (an https application), `false` never, `'auto'` (default)
   * when a proxy trusted by `trustProxy` reports https in `X-Forwarded-Proto` (without one, never).
   */
  secureCookies?: boolean | 'auto';
  /**
   * The proxies trusted to report the client's address (as `NotifierOptions.trustProxy`), for the
   * audit record and the sign-in slow-down, and its protocol, for `secureCookies: 'auto'`.
   */
  trustProxy?: TrustProxy;
  /** Signs the CSRF tokens; without it, a random secret is kept in `state`. */
  csrfSecret?: string;
  /** How long audit entries are kept (ms; default 90 days). */
  auditRetentionMs?: number;
  /** How many of the latest audit entries the admin page and API show (default 100). */
  auditLimit?: number;
  clock?: Clock;
  logger?: Logger;
}

/** The account pages, ready to be mounted by a host (`notifyRouter(pages)`, `notifyMiddleware(pages)`). */
export interface AccountPages {
  /** Serves the pages, the JSON API and the sign-in; null for any other path. */
  handle: HttpHandler;
}

/**
 * The web pages where people create, see and revoke their API keys, and where admins oversee every
 * key of their organization, with the JSON API behind them (README.md#account-pages). Every creation
 * and revocation is recorded with who, when, which key and from which address.
 *
 * @throws TypeError without `resolveUser` and without `signIn`, without the notifier's `apiKeys` or
 * without `state`; RangeError for an invalid `trustProxy`, a `basePath` not starting with `/`,
 * `auditRetentionMs` (not a positive, finite number) or `auditLimit` (not a whole number, 1 or more).
 */
export function accountPages(options: AccountPagesOptions): AccountPages {
  const resolveUser = options.resolveUser ?? options.signIn?.resolveUser;
  if (resolveUser === undefined) {
    throw new TypeError('accountPages needs resolveUser (your sign-in) or signIn (the library’s)');
  }
  if (typeof resolveUser !== 'function') {
    throw new TypeError(
      'accountPages: resolveUser must be a function answering who is signed in (the user, or null)',
    );
  }
  checkParts(options);
  // Checked here: a bad value would fail each audit write later, only logged, or every admin read.
  checkNumberOption('accountPages', 'auditRetentionMs', options.auditRetentionMs, 'positive lifetime');
  checkNumberOption('accountPages', 'auditLimit', options.auditLimit, 'positive count');
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const shared = {
    keys: options.notifier.apiKeys,
    failedCallbacks: options.notifier.failedCallbacks ?? null,
    resolveUser,
    audit: auditLog(options.state, clock, options.auditRetentionMs ?? 90 * 24 * 3600_000),
    auditLimit: options.auditLimit ?? 100,
    csrf: csrfTokens(options.state, options.csrfSecret),
    signIn: options.signIn ?? null,
    secureCookies: options.secureCookies ?? 'auto',
    clock,
    logger,
  };
  /** The pages as mounted at `basePath`: their links, form actions and redirects start there. */
  const handlerAt = (basePath: string): HttpHandler => {
    const context: PagesContext = {
      ...shared,
      basePath,
      signInPath: options.signInPath ?? (options.signIn ? `${basePath}/signin` : null),
    };
    const routes = [
      ...pageRoutes(context),
      ...jsonRoutes(context),
      ...(options.signIn ? signInRoutes(context, options.signIn) : []),
    ];
    return createHttpHandler(routes, { logger, trustProxy: options.trustProxy });
  };
  if (options.basePath !== undefined) return { handle: handlerAt(options.basePath.replace(/\/+$/, '')) };
  // Without a basePath, where the host says the pages are mounted. The mounts used last are kept: a
  // mount path with parameters (`/:team`), or a case-insensitive one (`/SETTINGS`), has as many as
  // requests name. The root's at once: creating a handler checks `trustProxy`, which must throw
  // here, not later.
  const mounted = new Map<string, HttpHandler>([['', handlerAt('')]]);
  return {
    handle: (request) => {
      const mountPath = (request.mountPath ?? '').replace(/\/+$/, '');
      let handler = mounted.get(mountPath);
      if (handler === undefined) {
        handler = handlerAt(mountPath);
        if (mounted.size >= mountsKept) mounted.delete(mounted.keys().next().value ?? '');
      } else {
        mounted.delete(mountPath);
      }
      mounted.set(mountPath, handler);
      return handler(request);
    },
  };
}

/** How many mount paths {@link accountPages} keeps the routes of, those used last. */
const mountsKept = 16;

/** Refuses what the pages could not run with, which would otherwise answer 500 on every page. */
function checkParts(options: AccountPagesOptions): void {
  const given = options as Partial<AccountPagesOptions>;
  if (typeof given.notifier?.apiKeys?.create !== 'function') {
    throw new TypeError('accountPages needs notifier: the notifier whose keys the pages manage');
  }
  const state = given.state as Partial<TransportStateStore> | undefined;
  if (typeof state?.compareAndSet !== 'function' || typeof state.get !== 'function') {
    throw new TypeError(
      "accountPages needs state: scopedTransportState(storage.transportState, 'account') of the notifier's storage",
    );
  }
  checkMethodsOption('accountPages: ', 'logger', given.logger, ...loggerMethods);
  checkMethodsOption('accountPages: ', 'clock', given.clock, ...clockMethods);
  if (options.basePath !== undefined && options.basePath !== '' && !options.basePath.startsWith('/')) {
    throw new RangeError(
      `accountPages: basePath must start with "/", got ${JSON.stringify(options.basePath)}`,
    );
  }
}

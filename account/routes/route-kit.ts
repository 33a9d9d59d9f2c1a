import type { HttpRequest, Route } from '../../core/adapter-kit.js';
import { errorResponse, htmlResponse, randomBase62 } from '../../core/adapter-kit.js';
import type { Clock, HttpResponse, Logger, Notifier } from '../../core/index.js';
import type { AccountRequest, AccountUser, ResolveUser } from '../account-user.js';
import type { AuditLog } from '../audit-log.js';
import type { CsrfTokens } from '../csrf.js';
import { parseCookies, serializeCookie } from '../http/cookies.js';
import type { PasswordSignIn } from '../sign-in/password-sign-in.js';
import type { SafeHtml } from '../views/html.js';
import { type Frame, layout } from '../views/layout.js';

/** What every route of the account pages works with. */
export interface PagesContext {
  keys: Notifier['apiKeys'];
  /** The notifier's failed callbacks, when the embedder handed them over. */
  failedCallbacks: Notifier['failedCallbacks'] | null;
  resolveUser: ResolveUser;
  audit: AuditLog;
  /** How many entries of the record the admin page and API show. */
  auditLimit: number;
  csrf: CsrfTokens;
  /** Where the pages are mounted (`''` at the root), for links, form actions and redirects. */
  basePath: string;
  /** The library's own sign-in, when the host has none. */
  signIn: PasswordSignIn | null;
  /** Where a signed-out visitor of a page is sent (with `?next=`), or null to answer 401. */
  signInPath: string | null;
  /** `Secure` cookies: always, never, or when the request came over https through a proxy. */
  secureCookies: boolean | 'auto';
  clock: Clock;
  logger: Logger;
}

/** Name of the cookie holding the browser's CSRF anchor. */
const anchorCookie = 'chat_notify_csrf';
/**
 * The anchor outlives browser sessions (400 days, the most browsers keep a cookie), so that the
 * sign-in's slow-down knows a browser that signed in before.
 */
const anchorMaxAgeSeconds = 400 * 24 * 3600;
const anchorPattern = /^[A-Za-z0-9]{32}$/;

/** The request as `resolveUser` receives it. */
function accountRequest(request: HttpRequest): AccountRequest {
  return {
    method: request.method,
    path: request.path,
    headers: request.headers,
    cookies: parseCookies(request.headers.cookie),
    clientAddress: request.clientAddress,
  };
}

/** Who is signed in, as the embedding application (or the library's sign-in) says. */
export async function identify(context: PagesContext, request: HttpRequest): Promise<AccountUser | null> {
  return (await context.resolveUser(accountRequest(request))) ?? null;
}

/**
 * Whether cookies get `Secure`. In `auto`, when a trusted proxy reports https in
 * `X-Forwarded-Proto`; what a client writes in that header itself counts for nothing.
 */
export function secureCookies(context: PagesContext, request: HttpRequest): boolean {
  if (context.secureCookies !== 'auto') return context.secureCookies;
  return request.forwardedProto === 'https';
}

/**
 * The CSRF anchor of the browser, if it has a well-formed one: a secret only that browser holds,
 * which also names it to the sign-in's slow-down.
 */
export function anchorOf(request: HttpRequest): string | undefined {
  const anchor = parseCookies(request.headers.cookie)[anchorCookie];
  return anchor !== undefined && anchorPattern.test(anchor) ? anchor : undefined;
}

/**
 * The CSRF anchor of the browser, and the header that gives it one when it has none yet, or keeps
 * the one it has for another 400 days (on pages and the session endpoint, so that their forms can
 * post): a browser in use stays the one its account knows, however long ago it first came.
 */
export function csrfAnchor(
  context: PagesContext,
  request: HttpRequest,
): { anchor: string; headers: Record<string, string> } {
  const anchor = anchorOf(request) ?? randomBase62(32);
  const cookie = serializeCookie(anchorCookie, anchor, {
    maxAgeSeconds: anchorMaxAgeSeconds,
    secure: secureCookies(context, request),
  });
  return { anchor, headers: { 'set-cookie': cookie } };
}

/** Whether a post carries the CSRF token of its browser and user. */
export function csrfHolds(
  context: PagesContext,
  request: HttpRequest,
  userId: string,
  token: string | null | undefined,
): Promise<boolean> {
  return context.csrf.verify(anchorOf(request), userId, token ?? undefined);
}

/** Only the pages' own inline style and script, by a nonce fresh on every response; no framing. */
const contentSecurityPolicy = (nonce: string) =>
  [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');

/** What a page shows, given the CSRF token of its forms. */
export interface PageSpec {
  status: number;
  title: string;
  current?: Frame['current'];
  content(csrf: string): SafeHtml;
}

/**
 * A whole HTML page with the security headers, and the CSRF anchor cookie (given, or renewed). Pages
 * are never cached: they hold tokens, and once a new key.
 */
export async function pageResponse(
  context: PagesContext,
  request: HttpRequest,
  user: AccountUser | null,
  spec: PageSpec,
): Promise<HttpResponse> {
  const { anchor, headers } = csrfAnchor(context, request);
  const csrf = await context.csrf.token(anchor, user?.userId ?? '');
  const nonce = randomBase62(24);
  const frame: Frame = {
    nonce,
    basePath: context.basePath,
    user,
    current: spec.current,
    signOut: user && context.signIn ? { csrf } : undefined,
  };
  return htmlResponse(spec.status, layout(frame, spec.title, spec.content(csrf)), {
    'content-security-policy': contentSecurityPolicy(nonce),
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
    'cache-control': 'no-store',
    ...headers,
  });
}

/** A `303 See Other` to a path of this site (after a post: a reload does not post again). */
export function redirect(location: string, headers: Record<string, string> = {}): HttpResponse {
  return { status: 303, headers: { location, 'cache-control': 'no-store', ...headers }, body: '' };
}

/**
 * A `GET` of an address that only takes a form's post (the address bar shows it after a post
 * without the script: opened again, bookmarked, reached by going back): sent on to the page `to`
 * instead of a bare `405`. It changes nothing, so it needs no session.
 */
export const visitedAgain = (path: string, to: string): Route => ({
  method: 'GET',
  path,
  handle: async () => redirect(to),
});

/**
 * A `GET` of a page's address with a slash at its end (typed, or completed by a browser): sent on to
 * the page, its query kept, instead of the API's JSON `404`.
 */
export const slashEnded = (page: string, basePath: string): Route => ({
  method: 'GET',
  path: `${page}/`,
  handle: async (request) => {
    const query = request.query.toString();
    return redirect(`${basePath}${page}${query === '' ? '' : `?${query}`}`);
  },
});

/** The JSON answer to a caller who is not signed in. */
export const notSignedIn = () => errorResponse(401, 'Not signed in');

/** The JSON answer to a member on an admin operation. */
export const adminsOnly = () =>
  errorResponse(403, 'Only organization admins can manage every key of the organization');

/** The JSON answer to a post without its CSRF token. */
export const csrfRefused = () => errorResponse(403, 'Missing or invalid CSRF token');

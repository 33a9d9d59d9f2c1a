import type { HttpRequest, Route } from '../../core/adapter-kit.js';
import type { HttpResponse } from '../../core/index.js';
import { parseCookies, serializeCookie } from '../http/cookies.js';
import { formFields } from '../http/forms.js';
import { safeNextPath } from '../http/next-path.js';
import type { PasswordSignIn } from '../sign-in/password-sign-in.js';
import { signInContent } from '../views/sign-in-view.js';
import { csrfRefusedPage, errorPage } from './page-kit.js';
import {
  anchorOf,
  csrfHolds,
  identify,
  type PagesContext,
  pageResponse,
  redirect,
  secureCookies,
  slashEnded,
  visitedAgain,
} from './route-kit.js';

function signInPage(
  context: PagesContext,
  request: HttpRequest,
  status: number,
  view: { next: string | null; email?: string; error?: string },
  headers: Record<string, string> = {},
): Promise<HttpResponse> {
  return pageResponse(context, request, null, {
    status,
    title: 'Sign in',
    content: (csrf) => signInContent({ ...view, basePath: context.basePath, csrf }),
  }).then((page) => ({ ...page, headers: { ...page.headers, ...headers } }));
}

/**
 * A route of the sign-in whose errors (a storage outage) become pages, as the other pages' do, not
 * the API's JSON. The page names nobody: who is signed in may be what could not be read.
 */
function signInRoute(
  context: PagesContext,
  method: Route['method'],
  path: string,
  handle: (request: HttpRequest) => Promise<HttpResponse>,
): Route {
  return {
    method,
    path,
    async handle(request) {
      try {
        return await handle(request);
      } catch (error) {
        return errorPage(context, request, null, error);
      }
    },
  };
}

/** `/signin` (the form and its post) and `/signout`, for the library's own sign-in. */
export function signInRoutes(context: PagesContext, signIn: PasswordSignIn): Route[] {
  const home = `${context.basePath}/account`;
  const clearSession = (request: HttpRequest) => ({
    'set-cookie': serializeCookie(signIn.cookieName, '', {
      maxAgeSeconds: 0,
      secure: secureCookies(context, request),
    }),
  });
  return [
    signInRoute(context, 'GET', '/signin', async (request) => {
      const next = safeNextPath(request.query.get('next'));
      if ((await identify(context, request)) !== null) return redirect(next ?? home);
      return signInPage(context, request, 200, { next });
    }),
    signInRoute(context, 'POST', '/signin', async (request) => {
      const fields = formFields(request.body);
      if (!(await csrfHolds(context, request, '', fields.get('csrf')))) {
        return csrfRefusedPage(context, request, null);
      }
      const next = safeNextPath(fields.get('next'));
      const email = fields.get('email')?.trim() ?? '';
      const result = await signIn.signIn(
        email,
        fields.get('password') ?? '',
        request.clientAddress,
        anchorOf(request),
      );
      if (result.outcome === 'throttled') {
        const wait = result.retryAfterSeconds;
        const error = `Too many failed sign-ins. Wait ${wait} second${wait === 1 ? '' : 's'} and try again.`;
        return signInPage(context, request, 429, { next, email, error }, { 'retry-after': String(wait) });
      }
      if (result.outcome === 'refused') {
        return signInPage(context, request, 401, { next, email, error: 'Wrong email or password.' });
      }
      // The browser's cookie is replaced: the session it named (another person's, maybe, on a
      // shared computer) would otherwise stay good for whoever copied the cookie.
      // Best effort: the new session stands, and a storage that fails here must not hide it behind
      // an error page (the old one then ends by itself when idle).
      const previous = parseCookies(request.headers.cookie)[signIn.cookieName];
      if (previous !== undefined) {
        await signIn.signOut(previous).catch((error: unknown) => {
          context.logger.warn('could not end the session a sign-in replaced', { error: String(error) });
        });
      }
      const cookie = serializeCookie(signIn.cookieName, result.sessionId, {
        secure: secureCookies(context, request),
      });
      return redirect(next ?? home, { 'set-cookie': cookie });
    }),
    // Signing out takes a post with the CSRF token: a link to it must not sign anybody out.
    visitedAgain('/signout', home),
    slashEnded('/signin', context.basePath),
    signInRoute(context, 'POST', '/signout', async (request) => {
      const user = await identify(context, request);
      const sessionId = parseCookies(request.headers.cookie)[signIn.cookieName];
      // A session that already ended (it expired while the page was open) has nothing left to
      // end, and a post that carries no session cookie (a cross-site form: the cookie is
      // SameSite) no cookie to clear: clearing it would let any site sign its visitors out.
      if (user === null) {
        return redirect(`${context.basePath}/signin`, sessionId === undefined ? {} : clearSession(request));
      }
      if (!(await csrfHolds(context, request, user.userId, formFields(request.body).get('csrf')))) {
        return csrfRefusedPage(context, request, user);
      }
      if (sessionId !== undefined) await signIn.signOut(sessionId);
      return redirect(`${context.basePath}/signin`, clearSession(request));
    }),
  ];
}

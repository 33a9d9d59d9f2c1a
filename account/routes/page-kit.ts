import type { HttpRequest, Route } from '../../core/adapter-kit.js';
import { type HttpResponse, isNotifyError } from '../../core/index.js';
import type { AccountUser } from '../account-user.js';
import { messageContent } from '../views/key-views.js';
import { identify, type PagesContext, pageResponse, redirect } from './route-kit.js';

type PageHandler = (
  request: HttpRequest,
  params: Readonly<Record<string, string>>,
  user: AccountUser,
) => Promise<HttpResponse>;

/** An HTML page that says what went wrong, with a way back. */
export function messagePage(
  context: PagesContext,
  request: HttpRequest,
  user: AccountUser | null,
  status: number,
  title: string,
  message: string,
): Promise<HttpResponse> {
  const back = user ? { href: `${context.basePath}/account`, text: 'Back to your API keys' } : undefined;
  return pageResponse(context, request, user, {
    status,
    title,
    content: () => messageContent(title, message, back),
  });
}

/** Where a signed-out visitor goes: the sign-in page and back to `returnTo`, or a 401 page. */
function signedOut(context: PagesContext, request: HttpRequest, returnTo: string): Promise<HttpResponse> {
  if (context.signInPath !== null) {
    return Promise.resolve(redirect(`${context.signInPath}?next=${encodeURIComponent(returnTo)}`));
  }
  return messagePage(context, request, null, 401, 'Not signed in', 'Sign in to manage your API keys.');
}

const statusOfCode: Readonly<Record<string, number>> = {
  invalid_request: 400,
  not_found: 404,
  unavailable: 503,
};

/**
 * The page that says what went wrong: the reason for an expected error, a generic text (and a log
 * line) for anything else. Never the API's JSON: whoever reads it is a person in a browser.
 */
export async function errorPage(
  context: PagesContext,
  request: HttpRequest,
  user: AccountUser | null,
  error: unknown,
): Promise<HttpResponse> {
  const known = isNotifyError(error) ? statusOfCode[error.code] : undefined;
  if (known === undefined) {
    context.logger.error('unexpected error on the account pages', {
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
  }
  const details =
    known !== undefined && isNotifyError(error)
      ? error.details
      : 'Something went wrong on our side. Try again later.';
  const page = await messagePage(context, request, user, known ?? 500, 'Something went wrong', details);
  return known === 503 ? { ...page, headers: { ...page.headers, 'retry-after': '1' } } : page;
}

/**
 * A page route for a signed-in user (others go to the sign-in page, then back to `returnTo`, the
 * page itself for a GET). Errors become pages too ({@link errorPage}).
 */
export function pageRoute(
  context: PagesContext,
  method: Route['method'],
  path: string,
  returnTo: (request: HttpRequest) => string,
  handler: PageHandler,
): Route {
  return {
    method,
    path,
    async handle(request, params) {
      let user: AccountUser | null = null;
      try {
        user = await identify(context, request);
        if (user === null) return await signedOut(context, request, returnTo(request));
        return await handler(request, params, user);
      } catch (error) {
        return errorPage(context, request, user, error);
      }
    },
  };
}

/** The page refused to a post without its CSRF token. */
export const csrfRefusedPage = (context: PagesContext, request: HttpRequest, user: AccountUser | null) =>
  messagePage(
    context,
    request,
    user,
    403,
    'This form has expired',
    'The form was not sent from this site, or is too old. Go back, reload the page and try again.',
  );

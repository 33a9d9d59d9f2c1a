import type { HttpRequest, Route } from '../../core/adapter-kit.js';
import { type ApiKeyView, type HttpResponse, isNotifyError, type NotifyErrorCode } from '../../core/index.js';
import type { AccountUser } from '../account-user.js';
import { formFields } from '../http/forms.js';
import { createKey, findKey, type KeyScope, listKeys, revokeKey } from '../key-actions.js';
import { type AccountView, accountContent, adminContent, confirmContent } from '../views/key-views.js';
import { csrfRefusedPage, messagePage, pageRoute } from './page-kit.js';
import {
  csrfHolds,
  type PagesContext,
  pageResponse,
  redirect,
  slashEnded,
  visitedAgain,
} from './route-kit.js';

/** The refusals of a key creation the page shows beside its form, with the status they are answered with. */
const createRefusals: Partial<Record<NotifyErrorCode, number>> = {
  invalid_request: 400,
  unprocessable: 422,
  rate_limited: 429,
};

const revokedNotice = (key: ApiKeyView | undefined) =>
  key ? `The key “${key.label}” (${key.prefix}…) is revoked: it is refused from now on.` : undefined;

function accountPage(
  context: PagesContext,
  request: HttpRequest,
  user: AccountUser,
  status: number,
  view: Omit<AccountView, 'basePath' | 'csrf' | 'keys'>,
  keys: readonly ApiKeyView[],
): Promise<HttpResponse> {
  return pageResponse(context, request, user, {
    status,
    title: 'API keys',
    current: 'account',
    content: (csrf) =>
      accountContent({
        ...view,
        basePath: context.basePath,
        csrf,
        keys: keys.filter((key) => key.revokedAt === null),
      }),
  });
}

/**
 * The revocation form's post, in `scope`: without `confirm=yes` (no script ran to ask), a page that
 * asks; with it, the revocation, then back to `page` with a notice.
 */
function revokeRoute(context: PagesContext, path: string, scope: KeyScope, page: string): Route {
  return pageRoute(
    context,
    'POST',
    path,
    () => `${context.basePath}${page}`,
    async (request, params, user) => {
      if (scope === 'organization' && !user.admin) {
        return messagePage(
          context,
          request,
          user,
          403,
          'Not allowed',
          'Only organization admins can revoke the keys of others.',
        );
      }
      const fields = formFields(request.body);
      if (!(await csrfHolds(context, request, user.userId, fields.get('csrf')))) {
        return csrfRefusedPage(context, request, user);
      }
      const key = await findKey(context, user, scope, params.id ?? '');
      if (key === null)
        return messagePage(context, request, user, 404, 'Key not found', 'There is no such key among yours.');
      if (fields.get('confirm') !== 'yes') {
        return pageResponse(context, request, user, {
          status: 200,
          title: 'Revoke this key?',
          content: (csrf) =>
            confirmContent({
              action: `${context.basePath}${path.replace(':id', encodeURIComponent(key.id))}`,
              back: `${context.basePath}${page}`,
              csrf,
              key,
            }),
        });
      }
      await revokeKey(context, user, scope, key, request.clientAddress);
      return redirect(`${context.basePath}${page}?revoked=${encodeURIComponent(key.id)}`);
    },
  );
}

/** `/account` (the user's keys) and `/admin/keys` (every key of the organization, admins only). */
export function pageRoutes(context: PagesContext): Route[] {
  const { basePath } = context;
  const here = (request: HttpRequest) =>
    `${basePath}${request.path}${request.query.size > 0 ? `?${request.query.toString()}` : ''}`;
  return [
    pageRoute(context, 'GET', '/account', here, async (request, _params, user) => {
      const keys = await listKeys(context, user, 'own');
      const revoked = request.query.get('revoked');
      const notice = revokedNotice(keys.find((key) => key.id === revoked && key.revokedAt !== null));
      return accountPage(context, request, user, 200, { notice }, keys);
    }),
    pageRoute(
      context,
      'POST',
      '/account/keys',
      () => `${basePath}/account`,
      async (request, _params, user) => {
        const fields = formFields(request.body);
        if (!(await csrfHolds(context, request, user.userId, fields.get('csrf')))) {
          return csrfRefusedPage(context, request, user);
        }
        const label = fields.get('label') ?? '';
        try {
          const created = await createKey(context, user, label, request.clientAddress);
          return accountPage(context, request, user, 200, { created }, await listKeys(context, user, 'own'));
        } catch (error) {
          if (!isNotifyError(error)) throw error;
          const status = createRefusals[error.code];
          if (status === undefined) throw error;
          const { details } = error;
          const createError = { details, label };
          const page = await accountPage(
            context,
            request,
            user,
            status,
            { createError },
            await listKeys(context, user, 'own'),
          );
          // A 429 says when to try again, as the JSON API's does.
          if (error.retryAfterSeconds !== undefined)
            page.headers['retry-after'] = String(error.retryAfterSeconds);
          return page;
        }
      },
    ),
    revokeRoute(context, '/account/keys/:id/revoke', 'own', '/account'),
    pageRoute(context, 'GET', '/admin/keys', here, async (request, _params, user) => {
      if (!user.admin) {
        return messagePage(
          context,
          request,
          user,
          403,
          'Not allowed',
          'Only organization admins can see every key of the organization.',
        );
      }
      const search = request.query.get('search')?.trim() ?? '';
      const [keys, audit] = await Promise.all([
        listKeys(context, user, 'organization', search),
        context.audit.recent(user.organizationId, context.auditLimit),
      ]);
      const revoked = request.query.get('revoked');
      const notice = revokedNotice(keys.find((key) => key.id === revoked && key.revokedAt !== null));
      return pageResponse(context, request, user, {
        status: 200,
        title: 'All keys of the organization',
        current: 'admin',
        content: (csrf) => adminContent({ basePath, csrf, search, keys, audit, notice }),
      });
    }),
    revokeRoute(context, '/admin/keys/:id/revoke', 'organization', '/admin/keys'),
    slashEnded('/account', basePath),
    slashEnded('/admin/keys', basePath),
    visitedAgain('/account/keys', `${basePath}/account`),
    visitedAgain('/account/keys/:id/revoke', `${basePath}/account`),
    visitedAgain('/admin/keys/:id/revoke', `${basePath}/admin/keys`),
  ];
}

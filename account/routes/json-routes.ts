import { errorResponse, type HttpRequest, jsonResponse, type Route } from '../../core/adapter-kit.js';
import { type HttpResponse, type Notifier, NotifyError } from '../../core/index.js';
import type { AccountUser } from '../account-user.js';
import { jsonObject } from '../http/forms.js';
import { createKey, findKey, type KeyScope, listKeys, revokeKey } from '../key-actions.js';
import { auditJson, failedCallbackJson, keyJson } from '../key-json.js';
import {
  adminsOnly,
  csrfAnchor,
  csrfHolds,
  csrfRefused,
  identify,
  notSignedIn,
  type PagesContext,
} from './route-kit.js';

type UserHandler = (
  request: HttpRequest,
  params: Readonly<Record<string, string>>,
  user: AccountUser,
) => Promise<HttpResponse>;

/**
 * A JSON endpoint for the signed-in user: 401 for nobody, 403 for a member on an admin operation,
 * and, on a post, 403 without the `X-CSRF-Token` of the browser and user.
 */
function guarded(
  context: PagesContext,
  method: Route['method'],
  path: string,
  options: { admin: boolean },
  handler: UserHandler,
): Route {
  return {
    method,
    path,
    async handle(request, params) {
      const user = await identify(context, request);
      if (user === null) return notSignedIn();
      if (options.admin && !user.admin) return adminsOnly();
      if (
        method === 'POST' &&
        !(await csrfHolds(context, request, user.userId, request.headers['x-csrf-token']))
      ) {
        return csrfRefused();
      }
      return handler(request, params, user);
    },
  };
}

/** The label of a creation: `{"label": "…"}` and nothing else. */
function labelOf(request: HttpRequest): string {
  const body = jsonObject(request.headers['content-type'], request.body);
  const unknown = Object.keys(body).find((field) => field !== 'label');
  if (unknown !== undefined) throw new NotifyError('invalid_request', `${unknown}: is not a known field`);
  if (typeof body.label !== 'string') throw new NotifyError('invalid_request', 'label: must be a string');
  return body.label;
}

const revokeRoute = (context: PagesContext, path: string, scope: KeyScope): Route =>
  guarded(context, 'POST', path, { admin: scope === 'organization' }, async (request, params, user) => {
    const key = await findKey(context, user, scope, params.id ?? '');
    if (key === null) return errorResponse(404, 'API key not found');
    await revokeKey(context, user, scope, key, request.clientAddress);
    return jsonResponse(200, { status: 'ok' });
  });

/**
 * The JSON API behind the pages, for their script and for applications that build their own pages.
 * Errors are in the notification API's shape.
 */
export function jsonRoutes(context: PagesContext): Route[] {
  return [
    guarded(context, 'GET', '/account/api/session', { admin: false }, async (request, _params, user) => {
      const { anchor, headers } = csrfAnchor(context, request);
      const body = {
        user: {
          id: user.userId,
          organization_id: user.organizationId,
          admin: user.admin,
          name: user.name ?? null,
          email: user.email ?? null,
        },
        csrf_token: await context.csrf.token(anchor, user.userId),
      };
      return jsonResponse(200, body, { 'cache-control': 'no-store', ...headers });
    }),
    guarded(context, 'GET', '/account/api/keys', { admin: false }, async (_request, _params, user) =>
      jsonResponse(
        200,
        { keys: (await listKeys(context, user, 'own')).map(keyJson) },
        { 'cache-control': 'no-store' },
      ),
    ),
    guarded(context, 'POST', '/account/api/keys', { admin: false }, async (request, _params, user) => {
      const created = await createKey(context, user, labelOf(request), request.clientAddress);
      return jsonResponse(
        201,
        { api_key: created.apiKey, key: keyJson(created.key) },
        { 'cache-control': 'no-store' },
      );
    }),
    revokeRoute(context, '/account/api/keys/:id/revoke', 'own'),
    guarded(context, 'GET', '/admin/api/keys', { admin: true }, async (request, _params, user) => {
      const keys = await listKeys(context, user, 'organization', request.query.get('search') ?? undefined);
      return jsonResponse(200, { keys: keys.map(keyJson) }, { 'cache-control': 'no-store' });
    }),
    revokeRoute(context, '/admin/api/keys/:id/revoke', 'organization'),
    guarded(context, 'GET', '/admin/api/audit', { admin: true }, async (_request, _params, user) => {
      const entries = await context.audit.recent(user.organizationId, context.auditLimit);
      return jsonResponse(200, { entries: entries.map(auditJson) }, { 'cache-control': 'no-store' });
    }),
    ...(context.failedCallbacks === null ? [] : failedCallbackRoutes(context, context.failedCallbacks)),
  ];
}

/**
 * The organization's failed callbacks, for its admins: listed, and replayed one at a time (a fresh
 * series of attempts). Another organization's failure is not found.
 */
function failedCallbackRoutes(context: PagesContext, failed: Notifier['failedCallbacks']): Route[] {
  return [
    guarded(context, 'GET', '/admin/api/failed-callbacks', { admin: true }, async (_request, _params, user) =>
      jsonResponse(
        200,
        { failed_callbacks: (await failed.list(user.organizationId)).map(failedCallbackJson) },
        { 'cache-control': 'no-store' },
      ),
    ),
    guarded(
      context,
      'POST',
      '/admin/api/failed-callbacks/:requestId/replay',
      { admin: true },
      async (_request, params, user) => {
        const requestId = params.requestId ?? '';
        const own = (await failed.list(user.organizationId)).some(
          (failure) => failure.requestId === requestId,
        );
        if (!own || !(await failed.replay(requestId))) {
          return errorResponse(404, 'No failed callback of this request');
        }
        context.logger.info('callback replay asked by an admin', {
          requestId,
          organizationId: user.organizationId,
          userId: user.userId,
        });
        return jsonResponse(200, { status: 'ok' });
      },
    ),
  ];
}

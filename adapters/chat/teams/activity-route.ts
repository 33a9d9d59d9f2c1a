import {
  errorResponse,
  type HttpResponse,
  jsonResponse,
  type Logger,
  type Route,
} from '../../../core/adapter-kit.js';
import { parseActivity, type TeamsActivity, tenantOfActivity } from './activity.js';
import { answerCardAction, type ClickContext } from './clicks.js';
import { type ActivityTokenVerifier, serviceUrlMatches } from './inbound-auth.js';
import { type LinkingContext, linkFromActivity } from './linking.js';
import type { TeamsTenants } from './tenants.js';

/** What the activity endpoint works with once the notifier has connected the transport. */
export type ConnectedActivityContext = ClickContext & LinkingContext;

/** Settings of {@link activityRoute}. */
export interface ActivityRouteOptions {
  verifyToken: ActivityTokenVerifier;
  tenants: TeamsTenants;
  logger: Logger;
  /** The context, or null before the notifier connects the transport. */
  connected(): ConnectedActivityContext | null;
}

const accepted: HttpResponse = { status: 200, headers: {}, body: '' };

/**
 * A refused activity's `401`, with the challenge RFC 9110 §11.6.1 requires: the Bot Connector sends
 * a bearer token, and RFC 6750 §3.1 names what was wrong with one that came (`invalid_token`), and
 * nothing when none came, or another scheme.
 */
const refusedToken = (authorization: string | undefined, details: string): HttpResponse =>
  errorResponse(401, details, {
    'www-authenticate': /^bearer /i.test(authorization ?? '') ? 'Bearer error="invalid_token"' : 'Bearer',
  });

/**
 * `POST /teams/messages`, the bot's messaging endpoint (docs/teams.md). The `Authorization` token
 * is checked before anything else is done, the activity is not even parsed without a good one: `401`
 * in the error shape. Then the activity must name the service URL its token was issued for (else `401`) and come
 * from a tenant some organization names (else `403`; nothing is stored). Installation activities
 * link users and get an empty `200` once done; a click (`adaptiveCard/action` invoke) gets the card
 * to show in its `200`; other invokes get `501`, and other activities an empty `200`.
 */
export function activityRoute(options: ActivityRouteOptions): Route {
  return {
    method: 'POST',
    path: '/teams/messages',
    async handle(request) {
      const receivedAt = performance.now();
      const verdict = await options.verifyToken(request.method, request.headers.authorization);
      if (!verdict.ok) return refusedToken(request.headers.authorization, verdict.details);
      const context = options.connected();
      if (context === null) {
        return errorResponse(503, 'The Teams transport is not connected to a notifier yet', {
          'retry-after': '1',
        });
      }
      const parsed = parseActivity(request.body);
      if (!parsed.ok) return errorResponse(400, parsed.details);
      const { activity } = parsed;
      if (!serviceUrlMatches(verdict.claims, activity.serviceUrl)) {
        return refusedToken(
          request.headers.authorization,
          'The activity token was issued for another service URL',
        );
      }
      // A bot registration may have other channels (Web Chat, Direct Line), whose clients choose
      // what an activity says of its sender and conversation: only Teams vouches for them.
      if (activity.channelId !== 'msteams') {
        options.logger.warn('activity of a channel other than Teams: refused', {
          channelId: activity.channelId,
        });
        return errorResponse(403, 'Only Microsoft Teams activities are served here');
      }
      const tenantId = tenantOfActivity(activity);
      if (tenantId === null || !(await options.tenants.serves(tenantId))) {
        options.logger.warn('Teams activity from a tenant no organization names: refused', {
          tenantId,
          type: activity.type,
        });
        return errorResponse(403, 'This tenant is not served here');
      }
      return handleActivity(context, activity, tenantId, receivedAt);
    },
  };
}

async function handleActivity(
  context: ConnectedActivityContext,
  activity: TeamsActivity,
  tenantId: string,
  receivedAt: number,
): Promise<HttpResponse> {
  if (activity.type === 'invoke') {
    if (activity.name !== 'adaptiveCard/action') {
      return errorResponse(501, `Invoke ${activity.name ?? '(unnamed)'} is not handled here`);
    }
    return jsonResponse(200, await answerCardAction(context, activity, tenantId, receivedAt));
  }
  await linkFromActivity(context, activity, tenantId);
  return accepted;
}

import { type AuthConfiguration, CloudAdapter } from '@microsoft/agents-hosting';
import {
  type ChatAddress,
  type ChatDelivery,
  type ChatSink,
  type ChatTransport,
  type ChatUpdate,
  checkDelayRange,
  checkHttpUrlOption,
  checkNumberOption,
  type DeliveryRef,
  isRecipientGone,
  type Logger,
  type MessageView,
  NotifyError,
  normalizeEmail,
  RecipientGoneError,
  silentLogger,
} from '../../../core/adapter-kit.js';
import { activityRoute, type ConnectedActivityContext } from './activity-route.js';
import { adaptiveCard, cardMessage } from './card.js';
import { AnsweringCopies } from './clicks.js';
import { type ConversationTarget, teamsConnector } from './connector.js';
import { readTeamsRef, type TeamsMessageRef, teamsCopies, teamsRef } from './copies.js';
import { FollowUps } from './follow-ups.js';
import { activityTokenVerifier } from './inbound-auth.js';
import { markUnreachable } from './linking.js';
import { type TeamsMember, teamsMembers } from './members.js';
import { slidingWindowPacer, teamsTenantLimits } from './pacer.js';
import { connectorErrorCodeOf, httpStatusOf, retryPolicy, type TeamsRetryOptions } from './retry.js';
import { normalizeTenantId, type TeamsTenants } from './tenants.js';
import { connectionsOf, type TeamsTokenProvider } from './token-provider.js';

/** Codes of a `403` that mean the user removed or blocked the app. */
const goneCodes: ReadonlySet<string> = new Set(['BotNotInConversationRoster', 'ConversationBlockedByUser']);

/** Settings of {@link teamsTransport}. */
export interface TeamsTransportOptions {
  /** The bot's Microsoft App ID (Azure Bot → Configuration): the audience of every activity token. */
  appId: string;
  /**
   * The bot's client secret: with it the SDK's MSAL client gets outbound tokens from Microsoft
   * Entra. Not needed when `tokenProvider` is given.
   */
  appPassword?: string;
  /** The tenant of the bot's app registration (single-tenant bots): where tokens are issued. */
  appTenantId: string;
  /** Each organization's tenant; activities from any other tenant are refused. */
  tenants: TeamsTenants;
  /**
   * Microsoft Entra's authority, `https://login.microsoftonline.com` by default: outbound tokens come
   * from `<authority>/<appTenantId>`, and the keys of tokens it issues from
   * `<authority>/<appTenantId>/discovery/v2.0/keys`. Tests point it at a local server.
   */
  authority?: string;
  /** Where outbound tokens come from instead of the SDK's MSAL client (a local token endpoint, tests). */
  tokenProvider?: TeamsTokenProvider;
  /** Where failures and links are reported. */
  logger?: Logger;
  /** Retries of Bot Connector calls that failed for a passing reason (429, 412, 502, 504). */
  retry?: TeamsRetryOptions;
  /** Longest wait for one HTTP exchange with the Bot Connector (ms, default 15,000). */
  requestTimeoutMs?: number;
}

/**
 * A chat transport for Microsoft Teams (docs/teams.md) through the Bot Connector protocol, with the
 * Microsoft 365 Agents SDK. Users are linked when they install the app (their email comes from the
 * roster); each message is an Adaptive Card sent proactively in the user's 1:1 conversation with
 * the bot, with one `Action.Execute` per option; clicks come back to `POST /teams/messages` and are
 * answered with the updated card. Everything it keeps (links, the newest version of messages that
 * changed) lives in the notifier's storage, and what routes a click in the refs the core keeps, so
 * any number of instances can serve one bot.
 */
export function teamsTransport(options: TeamsTransportOptions): ChatTransport {
  // Checked at run time too: `process.env.TEAMS_APP_ID!` passes the type check while unset.
  if (typeof options.appId !== 'string' || options.appId.trim() === '') {
    throw new RangeError('teamsTransport: appId must be a non-empty string');
  }
  // Unset, the SDK would fall back to Bot Framework's own tenant: every send of a single-tenant bot
  // would fail at its token, long after the start.
  if (typeof options.appTenantId !== 'string' || options.appTenantId.trim() === '') {
    throw new RangeError(
      'teamsTransport: appTenantId must be a non-empty string (the tenant of the app registration)',
    );
  }
  if (
    typeof options.tenants !== 'object' ||
    options.tenants === null ||
    typeof options.tenants.tenantOf !== 'function' ||
    typeof options.tenants.serves !== 'function'
  ) {
    throw new TypeError(
      'teamsTransport: tenants must give each organization its tenant ({ tenantOf, serves }, e.g. fixedTeamsTenants({ acme: "<tenant id>" }))',
    );
  }
  if (options.tokenProvider === undefined && !options.appPassword) {
    throw new RangeError('teamsTransport: appPassword is needed unless a tokenProvider is given');
  }
  checkNumberOption('teamsTransport', 'requestTimeoutMs', options.requestTimeoutMs, 'positive duration');
  checkNumberOption('teamsTransport', 'retry.retries', options.retry?.retries, 'count');
  checkNumberOption('teamsTransport', 'retry.minDelayMs', options.retry?.minDelayMs, 'duration');
  checkNumberOption('teamsTransport', 'retry.maxDelayMs', options.retry?.maxDelayMs, 'duration');
  const { minDelayMs, maxDelayMs } = retryPolicy(options.retry);
  checkDelayRange('teamsTransport', minDelayMs, maxDelayMs);
  checkHttpUrlOption('teamsTransport', 'authority', options.authority);
  const logger = options.logger ?? silentLogger;
  const authority = (options.authority ?? 'https://login.microsoftonline.com').replace(/\/+$/, '');
  const connection: AuthConfiguration = {
    clientId: options.appId,
    clientSecret: options.appPassword,
    tenantId: options.appTenantId,
    authority,
  };
  // An explicit connection: without one the SDK would fill its settings in from environment variables.
  const adapter = new CloudAdapter({
    ...connection,
    connections: new Map([['serviceConnection', connection]]),
    connectionsMap: [{ serviceUrl: '*', connection: 'serviceConnection' }],
  });
  // The SDK's default error handler would post "The agent encountered an error" to the user.
  adapter.onTurnError = async (_context, error) => {
    throw error;
  };
  const { tokenProvider } = options;
  if (tokenProvider) adapter.connectionManager = connectionsOf(tokenProvider, connection);
  const connector = teamsConnector({
    appId: options.appId,
    adapter,
    retry: retryPolicy(options.retry),
    pacer: slidingWindowPacer(),
    tenantPacer: slidingWindowPacer(teamsTenantLimits),
    requestTimeoutMs: options.requestTimeoutMs ?? 15_000,
    // The SDK's MSAL client keeps its tokens in caches shared by every client of the process, which
    // are not this transport's to clear: with it, as with a provider that keeps nothing, a 401 fails.
    ...(tokenProvider?.forget ? { forgetTokens: tokenProvider.forget.bind(tokenProvider) } : {}),
  });
  const answering = new AnsweringCopies();
  const followUps = new FollowUps();
  let connected: ConnectedActivityContext | null = null;

  const state = (): ConnectedActivityContext => {
    if (connected === null)
      throw new NotifyError('internal', 'The Teams transport is not connected to a notifier');
    return connected;
  };

  /**
   * A `403` that says the app was removed or blocked: the user is not tried again until they
   * install it again, which Teams tells, and is no Teams recipient meanwhile (a delivery counts as
   * not reaching them here, not as failed). Any other `403` (an app an admin disabled, say) fails
   * this delivery only: nothing would tell when it passes.
   */
  const markedWhenForbidden = async (tenantId: string, userId: string, error: unknown): Promise<never> => {
    if (httpStatusOf(error) === 403 && goneCodes.has(connectorErrorCodeOf(error) ?? '')) {
      await markUnreachable(state(), tenantId, userId);
      throw new RecipientGoneError(`Teams user ${userId} removed or blocked the app`, { cause: error });
    }
    throw error;
  };

  /**
   * Where a delivered message is updated: the Bot Connector of its recipient as their link says now
   * (Teams may move a tenant to another service URL), or, for a message of an earlier release, as
   * the record it kept says.
   */
  const targetOf = async ({
    conversationId,
    activityId,
    delivered,
  }: TeamsMessageRef): Promise<
    ConversationTarget & { tenantId: string; userId: string; unreachable: boolean }
  > => {
    const found =
      delivered === null
        ? await state().copies.legacy(conversationId, activityId)
        : await state().members.get(delivered.installationId, delivered.userRef);
    if (found === null) {
      throw new NotifyError(
        'not_found',
        `Teams message ${activityId} in ${conversationId}: its recipient is unknown`,
      );
    }
    const { serviceUrl, agent, tenantId, userId } = found;
    // A message of an earlier release kept its recipient in its own record: their link says whether
    // Teams still takes messages for them.
    const member = 'unreachable' in found ? found : await state().members.get(tenantId, userId);
    return { serviceUrl, agent, conversationId, tenantId, userId, unreachable: member?.unreachable ?? false };
  };

  /**
   * Shows `view` on `message` (an update of its copy). Answers false when a newer view was claimed
   * while it was sent: it may have reached Teams after that one, and replaced it. `checking`: the
   * check of a click's answer sends it, which no view another answer carried stands in for.
   */
  const show = async (message: TeamsMessageRef, view: MessageView, checking = false): Promise<boolean> => {
    const { conversationId, activityId } = message;
    const card = adaptiveCard(view);
    // Where to send it is read beside the claim, not after it: one round trip fewer per copy when a
    // request finishes, and a copy whose recipient answered Teams' address look-up has a link.
    const [claimed, target] = await Promise.all([
      state().copies.claim(message, view.version, card),
      targetOf(message),
    ]);
    // A newer view is shown already; or Teams said its recipient removed or blocked the app, and it
    // would refuse the update; or a click on this very copy is being answered, or was answered with
    // this view: the answer replaces the card, and brings it up to date once Teams applied it.
    if (
      !claimed ||
      target.unreachable ||
      answering.leaveUpdate(AnsweringCopies.key(conversationId, activityId), checking ? null : view.version)
    ) {
      return true;
    }
    const update = () => connector.update(target, activityId, cardMessage(view, card));
    const updated = await update()
      .catch(async (error: unknown) => {
        // Teams has been seen to answer 404 for a card that exists (msteams-docs#6139): one more
        // try, a retry's pause later, before the message counts as gone.
        if (httpStatusOf(error) !== 404) throw error;
        await new Promise((resolve) => setTimeout(resolve, minDelayMs));
        // A newer view claimed meanwhile (a click answered) is not to be replaced with this one.
        if (await state().copies.superseded(message, view.version)) return;
        return update();
      })
      .then(
        () => true,
        (error: unknown) => markedWhenForbidden(target.tenantId, target.userId, error),
      )
      .catch((error: unknown) => {
        // Teams answered that the user removed or blocked the app: it takes no update, now or later.
        if (isRecipientGone(error)) return false;
        // The message, or its conversation, is gone (deleted by its recipient or an admin), Teams says
        // twice: no update will ever land, and trying again for hours would send every other copy
        // its card each time.
        if (httpStatusOf(error) === 404) {
          logger.info('Teams message gone: not updated', {
            conversationId,
            activityId,
            code: connectorErrorCodeOf(error),
          });
          return false;
        }
        throw error;
      });
    return !updated || !(await state().copies.superseded(message, view.version));
  };

  const conversationOf = async (member: TeamsMember): Promise<string> => {
    if (member.conversationId !== null) return member.conversationId;
    const conversationId = await connector
      .createConversation({ serviceUrl: member.serviceUrl, tenantId: member.tenantId, userId: member.userId })
      .catch((error: unknown) => markedWhenForbidden(member.tenantId, member.userId, error));
    await state().members.change(member.tenantId, member.userId, (current) => ({
      ...current,
      conversationId,
    }));
    return conversationId;
  };

  return {
    platform: 'teams',

    async address(user, organization): Promise<ChatAddress | null> {
      const tenantId = await options.tenants.tenantOf(organization.id);
      if (tenantId === null) return null;
      const member = await state().members.findByEmail(
        normalizeTenantId(tenantId),
        normalizeEmail(user.email),
      );
      if (member === null || member.unreachable) return null;
      return { installationId: member.tenantId, userRef: member.userId };
    },

    async deliver(delivery: ChatDelivery): Promise<DeliveryRef> {
      const { message: view, address } = delivery;
      const member = await state().members.get(address.installationId, address.userRef);
      if (member === null || member.unreachable) {
        // Marked since `address` answered (Teams said the app was removed, or another send learnt it).
        throw new RecipientGoneError('This Teams user is not linked, or no longer reachable');
      }
      const card = adaptiveCard(view);
      const post = (conversationId: string): Promise<string> =>
        connector
          .send(
            { serviceUrl: member.serviceUrl, conversationId, agent: member.agent, tenantId: member.tenantId },
            cardMessage(view, card),
          )
          .catch((error: unknown) => markedWhenForbidden(member.tenantId, member.userId, error));
      let conversationId = await conversationOf(member);
      let activityId: string;
      try {
        activityId = await post(conversationId);
      } catch (error) {
        // The kept personal conversation is gone (Teams answers `404 ConversationNotFound`): nothing
        // was posted, and a new one is opened and kept in its place.
        if (httpStatusOf(error) !== 404 || member.conversationId === null) throw error;
        conversationId = await conversationOf({ ...member, conversationId: null });
        activityId = await post(conversationId);
      }
      if (view.kind !== 'interactive') return { conversationId, activityId };
      return teamsRef(
        { conversationId, activityId },
        { version: view.version, installationId: member.tenantId, userRef: member.userId },
      );
    },

    async update(delivery: ChatUpdate, ref: DeliveryRef): Promise<void> {
      const message = readTeamsRef(ref);
      // Failing makes the core refresh the message with the request's current view.
      if (!(await show(message, delivery.message))) {
        throw new Error(
          `Teams message ${message.activityId} in ${message.conversationId}: a newer view was claimed while view ${delivery.message.version} was sent`,
        );
      }
    },

    routes: [
      activityRoute({
        verifyToken: activityTokenVerifier({
          appId: options.appId,
          appTenantId: options.appTenantId,
          authority,
        }),
        tenants: options.tenants,
        logger,
        connected: () => connected,
      }),
    ],

    connect(sink: ChatSink): void {
      connected = {
        sink,
        members: teamsMembers(sink.state),
        copies: teamsCopies(sink.state, sink.retentionMs),
        answering,
        followUps,
        show,
        connector,
        logger,
      };
    },

    close: () => followUps.close(),
  };
}

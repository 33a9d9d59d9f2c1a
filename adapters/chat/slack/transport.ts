import type { WebClient } from '@slack/web-api';
import {
  type ChatAddress,
  type ChatDelivery,
  type ChatSink,
  type ChatTransport,
  type ChatUpdate,
  type Clock,
  checkDelayRange,
  checkHttpUrlOption,
  checkNumberOption,
  type DeliveryRef,
  errorResponse,
  type Logger,
  NotifyError,
  normalizeEmail,
  RecipientGoneError,
  shuttingDownResponse,
  silentLogger,
  systemClock,
} from '../../../core/adapter-kit.js';
import { slackMessage } from './blocks.js';
import { applyBlockActions } from './clicks.js';
import { type SlackClients, type SlackRetryOptions, slackClients, slackErrorCode } from './clients.js';
import { readSlackRef, type SlackCopies, slackCopies, slackRef } from './copies.js';
import { type DirectChannels, directChannels } from './direct-channels.js';
import type { BlockActions } from './interaction.js';
import { interactivityRoute } from './interactivity-route.js';
import { type SlackUserKey, type SlackUsers, slackUsers } from './slack-users.js';

/** An organization's installation of the Slack app: its workspace and the bot token it was given. */
export interface SlackInstallation {
  /** The workspace's team id (`T…`). */
  teamId: string;
  /** The bot token of the installation (`xoxb-…`); never logged. */
  botToken: string;
}

/**
 * The installation of an organization, or null when it has none (its users are then not reached
 * on Slack). Called on every delivery and update, so that an installation can change at any time;
 * cache in it if looking one up is slow.
 */
export type SlackInstallationResolver = (
  organizationId: string,
) => SlackInstallation | null | Promise<SlackInstallation | null>;

/** Settings of {@link slackTransport}. */
export interface SlackTransportOptions {
  /** The app's signing secret (Basic Information → App Credentials): checks interactivity requests. */
  signingSecret: string;
  /** Each organization's workspace installation; one transport serves every workspace. */
  installation: SlackInstallationResolver;
  /** Base URL of the Web API; `https://slack.com/api/` by default (tests and proxies point it elsewhere). */
  apiUrl?: string;
  /** Where failures of clicks processed after their answer, and rate-limit waits, are reported. */
  logger?: Logger;
  /** Judges the age of interactivity requests; the wall clock by default. */
  clock?: Clock;
  /**
   * Web API calls in flight at once, per workspace (default {@link defaultSlackConcurrency}: a
   * send to the most recipients a request may have goes out in one round).
   */
  concurrency?: number;
  /** Retries of calls that failed for a passing reason (429, 5xx, network). */
  retry?: SlackRetryOptions;
  /**
   * Longest wait for each step of one HTTP attempt: connecting, the answer's headers, its whole body
   * (ms, default 10,000).
   */
  requestTimeoutMs?: number;
  /**
   * How long a user id found by email is cached (ms, default one hour). An address with no active
   * user is remembered for 5 minutes, so a newcomer is found soon after joining.
   */
  userCacheTtlMs?: number;
}

/** The Slack transport, with what a host or a test may need beyond {@link ChatTransport}. */
export interface SlackTransport extends ChatTransport {
  /**
   * Resolves once every click answered so far has been applied (in tests). `Notifier.stop` waits for
   * the same, through `drain`, before it stops changing requests.
   */
  idle(): Promise<void>;
}

/**
 * Web API calls in flight at once per workspace by default: 50, the most recipients of one request,
 * so that a fan-out takes one Web API round trip, not four. This bounds connections, not the rate
 * (docs/slack.md#how-many-calls-at-once): each copy goes to its own direct-message channel, where
 * Slack allows about one message per second, and its workspace-wide limit is kept by its `429`,
 * which pauses every call to the workspace for its `Retry-After` whatever the concurrency.
 */
const defaultSlackConcurrency = 50;

/** Slack's answers to `conversations.open` for a user id that names no active user any more. */
const goneUserErrors: ReadonlySet<string> = new Set(['user_not_found', 'user_disabled', 'users_not_found']);

/**
 * Slack's answers to `chat.postMessage` into a cached direct-message channel that no longer takes
 * messages: the channel is gone, or archived (as a deactivated user's is).
 */
const staleChannelErrors: ReadonlySet<string> = new Set(['channel_not_found', 'is_archived']);

/**
 * Slack's answers to `chat.update` of a message that no update will reach again: deleted (by an
 * admin, or with its channel), or in a channel archived since. Trying again would only call Slack
 * for every copy of the request at each refresh, in a tier of about 50 calls a minute.
 */
const lostMessageErrors: ReadonlySet<string> = new Set([
  'message_not_found',
  'channel_not_found',
  'is_archived',
  'cant_update_message',
]);

/**
 * A chat transport for Slack (docs/slack.md): each organization's users are reached in its
 * workspace by email, as direct messages from the app's bot, with Block Kit buttons whose clicks
 * come back to `POST /slack/interactivity`. Everything it keeps (user ids, direct-message channels,
 * the newest view of messages that changed) lives in the notifier's storage, and what routes a
 * click in the refs the core keeps, so any number of instances can serve one app.
 */
export function slackTransport(options: SlackTransportOptions): SlackTransport {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError('slackTransport needs its options: { signingSecret, installation }');
  }
  // Checked at run time too: `process.env.SLACK_SIGNING_SECRET!` passes the type check while unset.
  if (typeof options.signingSecret !== 'string' || options.signingSecret === '') {
    throw new RangeError('slackTransport: signingSecret must be a non-empty string');
  }
  if (typeof options.installation !== 'function') {
    throw new TypeError(
      "slackTransport: installation must be a function answering an organization's Slack workspace and bot token",
    );
  }
  checkNumberOption('slackTransport', 'concurrency', options.concurrency, 'positive count');
  // 0 would turn undici's timeouts off, not make them instant.
  checkNumberOption('slackTransport', 'requestTimeoutMs', options.requestTimeoutMs, 'positive duration');
  checkNumberOption('slackTransport', 'userCacheTtlMs', options.userCacheTtlMs, 'positive lifetime');
  const retry = options.retry ?? {};
  checkNumberOption('slackTransport', 'retry.retries', retry.retries, 'count');
  for (const name of ['minDelayMs', 'maxDelayMs', 'maxRetryAfterMs'] as const) {
    checkNumberOption('slackTransport', `retry.${name}`, retry[name], 'duration');
  }
  checkDelayRange('slackTransport', retry.minDelayMs ?? 1000, retry.maxDelayMs ?? 10_000);
  checkHttpUrlOption('slackTransport', 'apiUrl', options.apiUrl);
  const logger = options.logger ?? silentLogger;
  const clock = options.clock ?? systemClock;
  const apiUrl = (options.apiUrl ?? 'https://slack.com/api/').replace(/\/*$/, '/');
  const clientFor: SlackClients = slackClients({
    apiUrl,
    retry,
    requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
    concurrency: options.concurrency ?? defaultSlackConcurrency,
    logger,
  });
  const userCacheTtl = { foundMs: options.userCacheTtlMs ?? 60 * 60_000, missingMs: 5 * 60_000 };
  const processing = new Set<Promise<void>>();
  /** Set by `drain`: the notifier is stopping, and clicks are no longer taken. */
  let draining = false;
  const idle = async (): Promise<void> => {
    while (processing.size > 0) await Promise.all(processing);
  };
  let connected: { sink: ChatSink; users: SlackUsers; copies: SlackCopies; channels: DirectChannels } | null =
    null;

  const connection = () => {
    if (connected === null) {
      throw new NotifyError('internal', 'The Slack transport is not connected to a notifier');
    }
    return connected;
  };

  const installationOf = async (organizationId: string) => {
    const installation = await options.installation(organizationId);
    if (installation === null) {
      throw new NotifyError('not_found', `Organization ${organizationId} has no Slack installation`);
    }
    return installation;
  };

  /**
   * Posts into the direct-message channel with a user (cached, or opened). When Slack says the user
   * is gone or the cached channel no longer takes messages, the channel and the user id are
   * forgotten and the address is looked up once more: it may belong to a new account now, and a
   * deactivated one is then known as such (no longer a Slack recipient).
   */
  const postDirect = async (
    client: WebClient,
    key: SlackUserKey,
    userId: string,
    message: ReturnType<typeof slackMessage>,
  ): Promise<{ channel: string; ts: string; userId: string }> => {
    const { users, channels } = connection();
    const post = async (id: string) => {
      const channel = await channels.open(client, key.teamId, id);
      try {
        const posted = await client.chat.postMessage({ channel, ...message });
        if (posted.ts === undefined) throw new Error('chat.postMessage answered no ts');
        // The cached id when Slack answers the same one: the references of every copy sent to
        // this user then share one string, kept as long as their sends are.
        const answered =
          posted.channel === undefined || posted.channel === channel ? channel : posted.channel;
        return { channel: answered, ts: posted.ts, userId: id };
      } catch (error) {
        if (staleChannelErrors.has(slackErrorCode(error) ?? '')) await channels.forget(key.teamId, id);
        throw error;
      }
    };
    try {
      return await post(userId);
    } catch (error) {
      const code = slackErrorCode(error);
      if (code === null || !(goneUserErrors.has(code) || staleChannelErrors.has(code))) throw error;
      await users.forget(key);
      const current = await users.find(client, key);
      if (current === null) {
        throw new RecipientGoneError(`${key.email} is no longer a user of Slack workspace ${key.teamId}`, {
          cause: error,
        });
      }
      return post(current);
    }
  };

  const accept = (clicks: BlockActions): void => {
    const { sink, copies } = connection();
    const task: Promise<void> = applyBlockActions({ sink, copies, logger }, clicks)
      .catch((error: unknown) => {
        logger.error('Slack click could not be applied', {
          channel: clicks.channel,
          ts: clicks.ts,
          error: String(error),
        });
      })
      .finally(() => processing.delete(task));
    processing.add(task);
  };

  return {
    platform: 'slack',

    async address(user, organization): Promise<ChatAddress | null> {
      const installation = await options.installation(organization.id);
      if (installation === null) return null;
      const userId = await connection().users.find(clientFor(installation), {
        organizationId: organization.id,
        teamId: installation.teamId,
        email: normalizeEmail(user.email),
      });
      return userId === null ? null : { installationId: installation.teamId, userRef: userId };
    },

    async deliver(delivery: ChatDelivery): Promise<DeliveryRef> {
      const { organization, message: view } = delivery;
      const installation = await installationOf(organization.id);
      const client = clientFor(installation);
      const recipient = normalizeEmail(delivery.recipient);
      const key = { organizationId: organization.id, teamId: installation.teamId, email: recipient };
      const posted = await postDirect(client, key, delivery.address.userRef, slackMessage(view));
      if (view.kind !== 'interactive') return { channel: posted.channel, ts: posted.ts };
      return slackRef(posted, {
        version: view.version,
        installationId: installation.teamId,
        userRef: posted.userId,
      });
    },

    async update(delivery: ChatUpdate, ref: DeliveryRef): Promise<void> {
      const message = readSlackRef(ref);
      const { copies } = connection();
      const { version } = delivery.message;
      // Claimed before Slack is called: of two views racing for one message, the older one learns
      // here that it is late. A call that fails keeps the claim, and the same view tried again
      // (the core retries failed updates) still goes through.
      if (!(await copies.claim(message, version))) return;
      const installation = await installationOf(delivery.organization.id);
      const { channel, ts } = message;
      try {
        await clientFor(installation).chat.update({
          channel,
          ts,
          ...slackMessage(delivery.message),
        });
      } catch (error) {
        const code = slackErrorCode(error);
        if (code === null || !lostMessageErrors.has(code)) throw error;
        logger.warn('Slack message can no longer be updated: left as it is', { channel, ts, error: code });
        return;
      }
      // A newer view claimed while this call was on its way may have reached Slack first, and this
      // one replaced it. Failing makes the core refresh the message with the request's current view,
      // which the claim lets through again.
      if (await copies.superseded(message, version)) {
        throw new Error(
          `Slack message ${channel}/${ts}: a newer view was claimed while view ${version} was sent`,
        );
      }
    },

    routes: [
      interactivityRoute({
        signingSecret: options.signingSecret,
        clock,
        refusal: () =>
          connected === null
            ? errorResponse(503, 'The Slack transport is not connected to a notifier yet', {
                'retry-after': '1',
              })
            : draining
              ? shuttingDownResponse()
              : null,
        accept,
      }),
    ],

    connect(sink: ChatSink): void {
      connected = {
        sink,
        users: slackUsers(sink.state, userCacheTtl),
        copies: slackCopies(sink.state, sink.retentionMs),
        // As long as a user id is trusted: a channel outlives neither the account nor the bot.
        channels: directChannels(sink.state, userCacheTtl.foundMs),
      };
    },

    idle,

    drain(): Promise<void> {
      draining = true;
      return idle();
    },
  };
}

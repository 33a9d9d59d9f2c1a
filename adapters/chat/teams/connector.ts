import { Activity } from '@microsoft/agents-activity';
import {
  type CloudAdapter,
  type ConnectorClient,
  CreateConversationOptionsBuilder,
} from '@microsoft/agents-hosting';
import { z } from 'zod';
import type { AgentAccount } from './members.js';
import type { Pacer } from './pacer.js';
import { httpStatusOf, type RetryEnvironment, type RetryPolicy, withRetries } from './retry.js';

/** A conversation with the bot, as the Bot Connector serves it. */
export interface ConversationTarget {
  serviceUrl: string;
  conversationId: string;
  agent: AgentAccount;
  /** The tenant of the conversation (lower case), whose calls are paced together. */
  tenantId: string;
}

/** A user as the roster answers (`GET /v3/conversations/{id}/members/{userId}`). */
export interface RosterMember {
  id: string;
  aadObjectId: string | null;
  email: string | null;
  userPrincipalName: string | null;
  /** The member's home tenant, as the roster gives it (an external member's is not the team's). */
  tenantId: string | null;
}

/** The Bot Connector calls of the transport, each paced, retried and bounded in time. */
export interface TeamsConnector {
  /** Posts an activity to a conversation; answers the new activity's id. */
  send(target: ConversationTarget, activity: object): Promise<string>;
  /** Replaces activity `activityId` of a conversation. */
  update(target: ConversationTarget, activityId: string, activity: object): Promise<void>;
  /** Reads one member of a conversation's roster. */
  member(target: ConversationTarget, userId: string): Promise<RosterMember>;
  /** Creates (or finds: Teams has one per user) the 1:1 conversation with a user; answers its id. */
  createConversation(input: { serviceUrl: string; tenantId: string; userId: string }): Promise<string>;
}

/** What {@link teamsConnector} is built from. */
export interface TeamsConnectorSettings {
  appId: string;
  /** The SDK's adapter, with the connection manager that gives outbound tokens. */
  adapter: CloudAdapter;
  retry: RetryPolicy;
  retryEnvironment?: RetryEnvironment;
  /** Paces sends and updates per conversation (Teams' limits). */
  pacer: Pacer;
  /** Paces sends, updates and new conversations per tenant (Teams' limit per app and tenant). */
  tenantPacer: Pacer;
  /** Longest wait for one HTTP attempt (ms). */
  requestTimeoutMs: number;
  /**
   * Drops the outbound tokens kept, after the Bot Connector refused one (`401`); then the call is
   * made once more. Without it a `401` fails the call: the same token would be refused again.
   */
  forgetTokens?: () => void;
}

/** What paces a call: its conversation, if it has one yet, and its tenant. */
interface Paced {
  conversationId: string | null;
  tenantId: string;
  /** A call an HTTP answer waits on (a send, a new conversation, a roster read), which goes before updates. */
  urgent: boolean;
}

const pacedBy = ({ conversationId, tenantId }: ConversationTarget) => ({ conversationId, tenantId });

/** The scope of Bot Connector tokens. */
const botConnectorScope = 'https://api.botframework.com';

const rosterSchema = z.object({
  id: z.string().min(1),
  aadObjectId: z.string().nullish(),
  email: z.string().nullish(),
  userPrincipalName: z.string().nullish(),
  tenantId: z.string().nullish(),
});

const resourceSchema = z.object({ id: z.string().min(1) });

/** The SDK's connector client does not encode the ids it puts in paths; Teams ids hold `:`, `;` and `@`. */
const pathId = (id: string): string => encodeURIComponent(id);

/**
 * The SDK's connector client for a conversation, with a token from the adapter's connection
 * manager. It is taken out of a `continueConversation` turn that does nothing else, so that no
 * failure ever happens inside a turn, where the SDK's error handler would message the user.
 */
async function clientFor(
  settings: TeamsConnectorSettings,
  target: ConversationTarget,
): Promise<ConnectorClient> {
  let client: ConnectorClient | undefined;
  await settings.adapter.continueConversation(
    settings.appId,
    {
      channelId: 'msteams',
      serviceUrl: target.serviceUrl,
      conversation: { id: target.conversationId },
      agent: target.agent,
    },
    async (context) => {
      client = context.turnState.get<ConnectorClient>(settings.adapter.ConnectorClientKey);
    },
  );
  if (client === undefined) throw new Error('The Agents SDK gave no connector client');
  return client;
}

/** Rejects when `work` takes longer than `ms`; the call may still complete, unseen. */
async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The Bot Connector calls, over the SDK's `CloudAdapter`. */
export function teamsConnector(settings: TeamsConnectorSettings): TeamsConnector {
  const { pacer, tenantPacer, retry, requestTimeoutMs } = settings;
  /**
   * One call, retried; `paced` paces it, by its conversation (when it has one) and its tenant,
   * counted under both when it is made, and only the HTTP exchange is timed, not the pacing.
   */
  const retried = <T>(what: string, paced: Paced, call: () => Promise<T>): Promise<T> =>
    withRetries(
      () => {
        const timed = () => within(requestTimeoutMs, what, call());
        const { conversationId, tenantId, urgent } = paced;
        const inTenant = () => tenantPacer.run(tenantId, async () => undefined, { urgent });
        if (conversationId === null) return inTenant().then(timed);
        return pacer.run(conversationId, timed, { urgent, alsoWithin: inTenant });
      },
      retry,
      settings.retryEnvironment,
    );
  const { forgetTokens } = settings;
  /** How many times the tokens were dropped: a call that began before the last time needs no other. */
  let forgotten = 0;
  /**
   * {@link retried}, and once more with a new token when the Bot Connector refused the one kept:
   * a revoked token stays refused until it expires, up to an hour. A `401` did nothing, so the call
   * may be made again; a second `401` fails it. Calls refused together drop the tokens once: each
   * later refusal would throw away the new token an earlier one fetched.
   */
  const attempt = async <T>(what: string, paced: Paced, call: () => Promise<T>): Promise<T> => {
    let seen = forgotten;
    const counted = () => {
      seen = forgotten;
      return call();
    };
    try {
      return await retried(what, paced, counted);
    } catch (error) {
      if (httpStatusOf(error) !== 401 || forgetTokens === undefined) throw error;
      if (seen === forgotten) {
        forgotten += 1;
        forgetTokens();
      }
      return retried(what, paced, call);
    }
  };

  return {
    async send(target, activity) {
      const sent = await attempt(
        'Sending a Teams message',
        { ...pacedBy(target), urgent: true },
        async () => {
          const client = await clientFor(settings, target);
          return client.sendToConversation(pathId(target.conversationId), Activity.fromObject(activity));
        },
      );
      return resourceSchema.parse(sent).id;
    },

    async update(target, activityId, activity) {
      await attempt('Updating a Teams message', { ...pacedBy(target), urgent: false }, async () => {
        const client = await clientFor(settings, target);
        const replacement = Activity.fromObject({ ...activity, id: activityId });
        return client.updateActivity(pathId(target.conversationId), pathId(activityId), replacement);
      });
    },

    async member(target, userId) {
      // Counted under the tenant's limit, among its deliveries: linking a team reads a roster entry
      // per member while Teams waits for the answer to its activity (about 15 s), which must not
      // wait behind the updates of a mass expiry.
      const paced = { tenantId: target.tenantId, conversationId: null, urgent: true };
      const found = await attempt('Reading a Teams roster', paced, async () => {
        const client = await clientFor(settings, target);
        return client.getConversationMember(pathId(userId), pathId(target.conversationId));
      });
      const member = rosterSchema.parse(found);
      return {
        id: member.id,
        aadObjectId: member.aadObjectId ?? null,
        email: member.email ?? null,
        userPrincipalName: member.userPrincipalName ?? null,
        tenantId: member.tenantId ?? null,
      };
    },

    async createConversation({ serviceUrl, tenantId, userId }) {
      const options = CreateConversationOptionsBuilder.create(settings.appId, 'msteams', serviceUrl)
        .withUser(userId)
        .withTenantId(tenantId)
        .isGroup(false)
        .build();
      return attempt(
        'Creating a Teams conversation',
        { tenantId, conversationId: null, urgent: true },
        async () => {
          let conversationId: string | undefined;
          await settings.adapter.createConversationAsync(
            settings.appId,
            options.channelId,
            options.serviceUrl,
            botConnectorScope,
            // The SDK's own builder leaves out `activity`, which the type marks as required: Teams
            // creates a 1:1 conversation without one, and the message follows as a send.
            options.parameters as Parameters<CloudAdapter['createConversationAsync']>[4],
            async (context) => {
              conversationId = context.activity.conversation?.id;
            },
          );
          if (conversationId === undefined) throw new Error('Teams created a conversation without an id');
          return conversationId;
        },
      );
    },
  };
}

import { type Logger, normalizeEmail } from '../../../core/adapter-kit.js';
import type { TeamsAccount, TeamsActivity } from './activity.js';
import type { TeamsConnector } from './connector.js';
import type { AgentAccount, TeamsMembers } from './members.js';

/** What linking users needs: the records of users, the Bot Connector, a logger. */
export interface LinkingContext {
  members: TeamsMembers;
  connector: TeamsConnector;
  logger: Logger;
}

const addActions: ReadonlySet<string> = new Set(['add', 'add-upgrade']);

/**
 * Links the users an installation activity names (docs/teams.md): each one's email and user
 * principal name come from the roster, and the user is reachable from then on.
 *
 * - In a personal (1:1) conversation, the app installed (`installationUpdate` "add", or
 *   `conversationUpdate` with the bot among `membersAdded`) links the user with that conversation.
 * - In a team or group chat, the user who added the app, and every user added later, are linked
 *   without a conversation: the first message to them creates their 1:1 conversation.
 * - The app removed from a personal conversation makes its user unreachable until installed again.
 *
 * Anything else is ignored. A user whose roster entry names no address cannot be linked (logged).
 */
export async function linkFromActivity(
  context: LinkingContext,
  activity: TeamsActivity,
  tenantId: string,
): Promise<void> {
  const personal = activity.conversation.conversationType === 'personal';
  const botId = activity.recipient.id;
  const agent: AgentAccount = {
    id: activity.recipient.id,
    ...(activity.recipient.name === undefined ? {} : { name: activity.recipient.name }),
  };
  const link = (account: TeamsAccount) =>
    linkUser(context, {
      activity,
      tenantId,
      agent,
      account,
      conversationId: personal ? activity.conversation.id : null,
    });

  if (activity.type === 'installationUpdate') {
    if (activity.action !== undefined && addActions.has(activity.action)) await link(activity.from);
    else if (activity.action === 'remove' && personal)
      await markUnreachable(context, tenantId, activity.from.id);
    return;
  }
  if (activity.type !== 'conversationUpdate') return;
  const added = activity.membersAdded ?? [];
  const botAdded = added.some((member) => member.id === botId);
  if (personal) {
    if (botAdded) await link(activity.from);
    if ((activity.membersRemoved ?? []).some((member) => member.id === botId)) {
      await markUnreachable(context, tenantId, activity.from.id);
    }
    return;
  }
  const users = added.filter((member) => member.id !== botId);
  if (botAdded && !users.some((member) => member.id === activity.from.id)) users.push(activity.from);
  for (const user of users) await link(user);
}

async function linkUser(
  context: LinkingContext,
  input: {
    activity: TeamsActivity;
    tenantId: string;
    agent: AgentAccount;
    account: TeamsAccount;
    conversationId: string | null;
  },
): Promise<void> {
  const { activity, tenantId, agent, account } = input;
  const roster = await context.connector.member(
    { serviceUrl: activity.serviceUrl, conversationId: activity.conversation.id, agent },
    account.id,
  );
  const emails = [
    ...new Set(
      [roster.email, roster.userPrincipalName].flatMap((address) =>
        address === null || !address.includes('@') ? [] : [normalizeEmail(address)],
      ),
    ),
  ];
  if (emails.length === 0) {
    context.logger.warn('Teams user without an email or user principal name in the roster: not linked', {
      tenantId,
      userId: account.id,
    });
    return;
  }
  await context.members.link({
    tenantId,
    userId: roster.id,
    aadObjectId: roster.aadObjectId ?? account.aadObjectId ?? null,
    emails,
    serviceUrl: activity.serviceUrl,
    agent,
    conversationId: input.conversationId,
    unreachable: false,
  });
  context.logger.info('Teams user linked', {
    tenantId,
    userId: roster.id,
    personal: input.conversationId !== null,
  });
}

/** Teams says the app can no longer reach the user: they are left out until it is installed again. */
export async function markUnreachable(
  context: Pick<LinkingContext, 'members' | 'logger'>,
  tenantId: string,
  userId: string,
): Promise<void> {
  await context.members.change(tenantId, userId, (member) => ({ ...member, unreachable: true }));
  context.logger.warn('Teams user unreachable: the app was removed or blocked', { tenantId, userId });
}

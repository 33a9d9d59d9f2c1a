import { type Logger, normalizeEmail } from '../../../core/adapter-kit.js';
import type { TeamsAccount, TeamsActivity } from './activity.js';
import type { TeamsConnector } from './connector.js';
import type { AgentAccount, TeamsMembers } from './members.js';
import { httpStatusOf } from './retry.js';

/** What linking users needs: the records of users, the Bot Connector, a logger. */
export interface LinkingContext {
  members: TeamsMembers;
  connector: TeamsConnector;
  logger: Logger;
}

/** Teams tells an install, or a removal, that is part of an app's upgrade apart: each counts as one. */
const addActions: ReadonlySet<string> = new Set(['add', 'add-upgrade']);
const removeActions: ReadonlySet<string> = new Set(['remove', 'remove-upgrade']);

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

  // A member the roster does not know (another bot, someone gone again, an admin who added the app
  // to a team they are not in) is skipped: Teams sending the activity again would change nothing.
  const linkMember = async (account: TeamsAccount): Promise<void> => {
    try {
      await link(account);
    } catch (error) {
      if (httpStatusOf(error) !== 404) throw error;
      context.logger.warn('Teams member not in the roster: not linked', { tenantId, userId: account.id });
    }
  };

  if (activity.type === 'installationUpdate') {
    if (activity.action !== undefined && addActions.has(activity.action)) await linkMember(activity.from);
    else if (activity.action !== undefined && removeActions.has(activity.action) && personal)
      await markUnreachable(context, tenantId, activity.from.id);
    return;
  }
  if (activity.type !== 'conversationUpdate') return;
  const added = activity.membersAdded ?? [];
  const botAdded = added.some((member) => member.id === botId);
  if (personal) {
    if (botAdded) await linkMember(activity.from);
    if ((activity.membersRemoved ?? []).some((member) => member.id === botId)) {
      await markUnreachable(context, tenantId, activity.from.id);
    }
    return;
  }
  const users = added.filter((member) => member.id !== botId);
  if (botAdded && !users.some((member) => member.id === activity.from.id)) users.push(activity.from);
  // One member whose roster entry cannot be read does not keep the others unlinked. A failure that
  // may pass is thrown once the rest are linked, so that the activity fails and Teams sends it
  // again; linking again is harmless.
  const failures: unknown[] = [];
  for (const user of users) {
    try {
      await linkMember(user);
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
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
    { serviceUrl: activity.serviceUrl, conversationId: activity.conversation.id, agent, tenantId },
    account.id,
  );
  // A member of another tenant (an external member of a shared channel) is linked in their own
  // tenant, never under this one: their roster address may be anyone's here.
  if (roster.tenantId !== null && roster.tenantId.toLowerCase() !== tenantId.toLowerCase()) {
    context.logger.warn('Teams user of another tenant: not linked', {
      tenantId,
      userId: account.id,
      homeTenantId: roster.tenantId,
    });
    return;
  }
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

import type { TransportStateStore } from '../../../core/adapter-kit.js';

/** The bot's account in a conversation, as Teams names it (`28:<app id>`). */
export interface AgentAccount {
  id: string;
  name?: string;
}

/**
 * A Teams user the app is installed for: who they are, where the Bot Connector serves their tenant,
 * and the 1:1 conversation with them once there is one. This is what links an organization's user
 * (by email) to Teams.
 */
export interface TeamsMember {
  /** Lower-case tenant id. */
  tenantId: string;
  /** The user's Teams id (`29:…`): whom proactive messages go to, and whose clicks count. */
  userId: string;
  /** The user's Microsoft Entra object id, when Teams gave it. */
  aadObjectId: string | null;
  /** Normalized addresses the roster gave (email and user principal name): how users are found. */
  emails: string[];
  /** The Bot Connector's address for the user's tenant and region. */
  serviceUrl: string;
  agent: AgentAccount;
  /** The 1:1 conversation with the user, or null until one is created. */
  conversationId: string | null;
  /** Teams answered `403` (the app was removed or blocked): not reached until installed again. */
  unreachable: boolean;
}

const memberKey = (tenantId: string, userId: string): string =>
  `member:${JSON.stringify([tenantId, userId])}`;
const emailKey = (tenantId: string, email: string): string => `email:${JSON.stringify([tenantId, email])}`;

/** The users of each tenant the app is installed for, over the transport's state. */
export interface TeamsMembers {
  /**
   * Records a user seen at an installation, reachable from now on. Keeps the 1:1 conversation
   * already known when `member` names none (the app was added to a team the user is in).
   */
  link(member: TeamsMember): Promise<void>;
  /** The user of a tenant with this Teams id, or null. */
  get(tenantId: string, userId: string): Promise<TeamsMember | null>;
  /** The user of a tenant with this (normalized) address, or null. */
  findByEmail(tenantId: string, email: string): Promise<TeamsMember | null>;
  /** Changes a user's record; does nothing when there is none. */
  change(tenantId: string, userId: string, change: (member: TeamsMember) => TeamsMember): Promise<void>;
}

/** {@link TeamsMembers} over the transport's state: nothing expires, an installation lasts. */
export function teamsMembers(state: TransportStateStore): TeamsMembers {
  const parse = (value: string): TeamsMember => JSON.parse(value) as TeamsMember;

  const change: TeamsMembers['change'] = async (tenantId, userId, apply) => {
    const key = memberKey(tenantId, userId);
    // Compare-and-set, so that a link and an unreachable mark racing each other both land.
    for (;;) {
      const record = await state.get(key);
      if (record === null) return;
      const next = apply(parse(record.value));
      if ((await state.compareAndSet(key, JSON.stringify(next), record.version)) !== null) return;
    }
  };

  const get: TeamsMembers['get'] = async (tenantId, userId) => {
    const record = await state.get(memberKey(tenantId, userId));
    return record === null ? null : parse(record.value);
  };

  return {
    async link(member) {
      const key = memberKey(member.tenantId, member.userId);
      for (;;) {
        const record = await state.get(key);
        const known = record === null ? null : parse(record.value);
        const next: TeamsMember = {
          ...member,
          conversationId: member.conversationId ?? known?.conversationId ?? null,
        };
        const written = await state.compareAndSet(key, JSON.stringify(next), record?.version ?? null);
        if (written !== null) break;
      }
      await Promise.all(
        member.emails.map((email) => state.set(emailKey(member.tenantId, email), member.userId)),
      );
    },

    get,

    async findByEmail(tenantId, email) {
      const userId = await state.get(emailKey(tenantId, email));
      if (userId === null) return null;
      const member = await get(tenantId, userId.value);
      // The address may have moved to another account since; only the account that has it counts.
      return member?.emails.includes(email) ? member : null;
    },

    change,
  };
}

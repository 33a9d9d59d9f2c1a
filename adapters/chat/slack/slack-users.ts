import type { WebClient } from '@slack/web-api';
import type { TransportStateStore } from '../../../core/adapter-kit.js';
import { slackErrorCode } from './clients.js';

/** How long what `users.lookupByEmail` answered is kept. */
export interface SlackUserCacheTtl {
  /** A user found in the workspace (ms). */
  foundMs: number;
  /** An address no active user of the workspace has (ms): a user who joins later is found after it. */
  missingMs: number;
}

/** A user id, or null for an address no active user of the workspace has. */
interface CachedUser {
  userId: string | null;
}

/** Where a user id is looked up: the organization, its workspace, the address (normalized). */
export interface SlackUserKey {
  organizationId: string;
  teamId: string;
  email: string;
}

/** Slack user ids by email, cached per organization and workspace in the transport's state. */
export interface SlackUsers {
  /** The id of the active user of the workspace with this address, or null when there is none. */
  find(client: WebClient, key: SlackUserKey): Promise<string | null>;
  /** Forgets what is cached for this address (Slack said the user it named is gone). */
  forget(key: SlackUserKey): Promise<void>;
}

const userKey = ({ organizationId, teamId, email }: SlackUserKey): string =>
  `user:${JSON.stringify([organizationId, teamId, email])}`;

/** {@link SlackUsers} over the transport's state. */
export function slackUsers(state: TransportStateStore, ttl: SlackUserCacheTtl): SlackUsers {
  const remember = async (key: SlackUserKey, userId: string | null): Promise<string | null> => {
    const cached: CachedUser = { userId };
    await state.set(userKey(key), JSON.stringify(cached), {
      ttlMs: userId === null ? ttl.missingMs : ttl.foundMs,
    });
    return userId;
  };

  return {
    async find(client, key) {
      const record = await state.get(userKey(key));
      if (record !== null) return (JSON.parse(record.value) as CachedUser).userId;
      try {
        const { user } = await client.users.lookupByEmail({ email: key.email });
        // A deactivated account keeps its address but can no longer read messages.
        return await remember(key, user?.id !== undefined && user.deleted !== true ? user.id : null);
      } catch (error) {
        if (slackErrorCode(error) === 'users_not_found') return remember(key, null);
        throw error;
      }
    },

    async forget(key) {
      await state.delete(userKey(key));
    },
  };
}

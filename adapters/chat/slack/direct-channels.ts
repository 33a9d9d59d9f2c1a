import type { WebClient } from '@slack/web-api';
import type { TransportStateStore } from '../../../core/adapter-kit.js';

/** The direct-message channels of the bot with users, cached in the transport's state. */
export interface DirectChannels {
  /** The `D…` channel with a user: cached, or opened with `conversations.open` (then cached). */
  open(client: WebClient, teamId: string, userId: string): Promise<string>;
  /** Forgets the cached channel with a user (Slack no longer knows it). */
  forget(teamId: string, userId: string): Promise<void>;
}

const channelKey = (teamId: string, userId: string): string => `dm:${JSON.stringify([teamId, userId])}`;

/**
 * {@link DirectChannels} over the transport's state. A bot's direct-message channel with a user
 * does not change, so caching it saves one Web API call per recipient of every send: a fan-out to
 * 50 people makes 50 calls instead of 100.
 */
export function directChannels(state: TransportStateStore, ttlMs: number): DirectChannels {
  return {
    async open(client, teamId, userId) {
      const cached = await state.get(channelKey(teamId, userId));
      if (cached !== null) return cached.value;
      const { channel } = await client.conversations.open({ users: userId });
      if (channel?.id === undefined) throw new Error('conversations.open answered no channel');
      await state.set(channelKey(teamId, userId), channel.id, { ttlMs });
      return channel.id;
    },
    async forget(teamId, userId) {
      await state.delete(channelKey(teamId, userId));
    },
  };
}

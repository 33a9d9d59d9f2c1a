import { longestOpenMs, NotifyError, type TransportStateStore } from '../../../core/adapter-kit.js';
import type { AdaptiveCard } from './card.js';
import type { AgentAccount } from './members.js';

/**
 * What the transport keeps of one delivered interactive message: where it is, whose it is (only that
 * user's clicks count), and the newest card it shows, which answers a click on it.
 */
export interface TeamsCopy {
  organizationId: string;
  /** Lower-case tenant id. */
  tenantId: string;
  /** `req_…` of the request the message belongs to. */
  sendId: string;
  /** Normalized address of the recipient. */
  recipient: string;
  /** The recipient's Teams id (`29:…`). */
  userId: string;
  /** The recipient's Microsoft Entra object id, when known. */
  aadObjectId: string | null;
  serviceUrl: string;
  agent: AgentAccount;
  conversationId: string;
  activityId: string;
  /** `MessageView.version` of the newest view applied (or being applied) to the message. */
  lastVersion: number;
  /** The card of that view. */
  card: AdaptiveCard;
}

/** How long a finished send is kept when the notifier does not say (a sink of a test). */
const defaultRetentionMs = 14 * 24 * 60 * 60_000;

const copyKey = (conversationId: string, activityId: string): string =>
  `copy:${JSON.stringify([conversationId, activityId])}`;

/** The records of delivered messages, by conversation and activity id (what Teams names a message by). */
export interface TeamsCopies {
  save(copy: TeamsCopy): Promise<void>;
  get(conversationId: string, activityId: string): Promise<TeamsCopy | null>;
  /**
   * Takes the right to show the view of `version` (as `card`) on a message: answers its record when
   * no newer view was applied, recording this one as the newest, or null when a newer one was, so
   * that an older view never replaces a newer one.
   * @throws NotifyError `not_found` when there is no record of the message.
   */
  claim(
    conversationId: string,
    activityId: string,
    version: number,
    card: AdaptiveCard,
  ): Promise<TeamsCopy | null>;
}

/**
 * {@link TeamsCopies} over the transport's state. A record lives as long as the notifier keeps its
 * send (`retentionMs`, `ChatSink.retentionMs`) after the longest a request stays open, counted from
 * its last write: after it a click on the message is refused, and the request has long finished.
 */
export function teamsCopies(state: TransportStateStore, retentionMs = defaultRetentionMs): TeamsCopies {
  const copyTtlMs = longestOpenMs + retentionMs;
  return {
    async save(copy) {
      await state.set(copyKey(copy.conversationId, copy.activityId), JSON.stringify(copy), {
        ttlMs: copyTtlMs,
      });
    },

    async get(conversationId, activityId) {
      const record = await state.get(copyKey(conversationId, activityId));
      return record === null ? null : (JSON.parse(record.value) as TeamsCopy);
    },

    async claim(conversationId, activityId, version, card) {
      const key = copyKey(conversationId, activityId);
      // Compare-and-set, retried when another update landed in between: of two views racing for
      // one message, the newer always ends up recorded, and the older one learns it is late.
      for (;;) {
        const record = await state.get(key);
        if (record === null) {
          throw new NotifyError('not_found', `No record of Teams message ${activityId} in ${conversationId}`);
        }
        const copy = JSON.parse(record.value) as TeamsCopy;
        if (version < copy.lastVersion) return null;
        const claimed: TeamsCopy = { ...copy, lastVersion: version, card };
        const written = await state.compareAndSet(key, JSON.stringify(claimed), record.version, {
          ttlMs: copyTtlMs,
        });
        if (written !== null) return claimed;
      }
    },
  };
}

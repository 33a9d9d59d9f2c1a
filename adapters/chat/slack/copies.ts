import { NotifyError, type TransportStateStore } from '../../../core/adapter-kit.js';

/**
 * What the transport keeps of one delivered interactive message: enough to route a click on it
 * (and check that the clicker is its recipient), and the version of the view it shows.
 */
export interface SlackCopy {
  organizationId: string;
  /** The workspace the message was posted in. */
  teamId: string;
  /** `req_…` of the request the message belongs to. */
  sendId: string;
  /** Normalized address of the recipient. */
  recipient: string;
  /** The recipient's Slack user id: the only user whose clicks on this message count. */
  slackUserId: string;
  /** `MessageView.version` of the newest view applied (or being applied) to the message. */
  lastVersion: number;
}

/**
 * Longer than any request lives (24 hours at most) plus the time a failed update may be retried
 * for; after it a click on the message is refused, and the request has long finished anyway.
 */
const copyTtlMs = 14 * 24 * 60 * 60_000;

const copyKey = (channel: string, ts: string): string => `copy:${channel}:${ts}`;

/** The records of delivered messages, by channel and `ts` (what Slack names a message by). */
export interface SlackCopies {
  save(channel: string, ts: string, copy: SlackCopy): Promise<void>;
  get(channel: string, ts: string): Promise<SlackCopy | null>;
  /**
   * Takes the right to show the view of `version` on a message: answers its record when no newer
   * view was applied (recording `version` as the newest), or null when a newer one was, so that
   * an older view never replaces a newer one.
   * @throws NotifyError `not_found` when there is no record of the message.
   */
  claim(channel: string, ts: string, version: number): Promise<SlackCopy | null>;
}

/** {@link SlackCopies} over the transport's state. */
export function slackCopies(state: TransportStateStore): SlackCopies {
  return {
    async save(channel, ts, copy) {
      await state.set(copyKey(channel, ts), JSON.stringify(copy), { ttlMs: copyTtlMs });
    },

    async get(channel, ts) {
      const record = await state.get(copyKey(channel, ts));
      return record === null ? null : (JSON.parse(record.value) as SlackCopy);
    },

    async claim(channel, ts, version) {
      const key = copyKey(channel, ts);
      // Compare-and-set, retried when another update landed in between: of two views racing for
      // one message, the newer always ends up recorded, and the older one learns it is late.
      for (;;) {
        const record = await state.get(key);
        if (record === null)
          throw new NotifyError('not_found', `No record of Slack message ${channel}/${ts}`);
        const copy = JSON.parse(record.value) as SlackCopy;
        if (version < copy.lastVersion) return null;
        if (version === copy.lastVersion) return copy;
        const claimed: SlackCopy = { ...copy, lastVersion: version };
        const written = await state.compareAndSet(key, JSON.stringify(claimed), record.version, {
          ttlMs: copyTtlMs,
        });
        if (written !== null) return claimed;
      }
    },
  };
}

import { z } from 'zod';
import { longestOpenMs, NotifyError, type TransportStateStore } from '../../../core/adapter-kit.js';

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

/** How long a finished send is kept when the notifier does not say (a sink of a test). */
const defaultRetentionMs = 14 * 24 * 60 * 60_000;

const copyKey = (channel: string, ts: string): string => `copy:${channel}:${ts}`;

/**
 * The record of a copy: a JSON array of its fields in the order of {@link SlackCopy}, without their
 * names, two thirds of the size of the object (a pending request keeps one per recipient). Records
 * written as the object by earlier releases are still read, and rewritten as the array.
 */
const storedCopy = z.tuple([z.string(), z.string(), z.string(), z.string(), z.string(), z.number()]);

/** The object form of earlier releases. */
const legacyCopy = z.object({
  organizationId: z.string(),
  teamId: z.string(),
  sendId: z.string(),
  recipient: z.string(),
  slackUserId: z.string(),
  lastVersion: z.number(),
});

const encode = (copy: SlackCopy): string =>
  JSON.stringify([
    copy.organizationId,
    copy.teamId,
    copy.sendId,
    copy.recipient,
    copy.slackUserId,
    copy.lastVersion,
  ] satisfies z.infer<typeof storedCopy>);

/**
 * The copy a record holds, in either form; null for a record in neither (as an instance of an
 * earlier release, which reads only objects, would write back after reading an array): such a
 * record is treated as absent rather than routing clicks with missing fields.
 */
const decode = (value: string): SlackCopy | null => {
  const parsed: unknown = JSON.parse(value);
  const stored = storedCopy.safeParse(parsed);
  if (stored.success) {
    const [organizationId, teamId, sendId, recipient, slackUserId, lastVersion] = stored.data;
    return { organizationId, teamId, sendId, recipient, slackUserId, lastVersion };
  }
  return legacyCopy.safeParse(parsed).data ?? null;
};

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

/**
 * {@link SlackCopies} over the transport's state. A record lives as long as the notifier keeps its
 * send (`retentionMs`, `ChatSink.retentionMs`) after the longest a request stays open, counted from
 * its last write: after it a click on the message is refused, and the request has long finished.
 * It names the recipient: a shorter retention must not leave it behind.
 */
export function slackCopies(state: TransportStateStore, retentionMs = defaultRetentionMs): SlackCopies {
  const copyTtlMs = longestOpenMs + retentionMs;
  return {
    async save(channel, ts, copy) {
      await state.set(copyKey(channel, ts), encode(copy), { ttlMs: copyTtlMs });
    },

    async get(channel, ts) {
      const record = await state.get(copyKey(channel, ts));
      return record === null ? null : decode(record.value);
    },

    async claim(channel, ts, version) {
      const key = copyKey(channel, ts);
      // Compare-and-set, retried when another update landed in between: of two views racing for
      // one message, the newer always ends up recorded, and the older one learns it is late.
      for (;;) {
        const record = await state.get(key);
        const copy = record === null ? null : decode(record.value);
        if (record === null || copy === null) {
          throw new NotifyError('not_found', `No record of Slack message ${channel}/${ts}`);
        }
        if (version < copy.lastVersion) return null;
        if (version === copy.lastVersion) return copy;
        const claimed: SlackCopy = { ...copy, lastVersion: version };
        const written = await state.compareAndSet(key, encode(claimed), record.version, {
          ttlMs: copyTtlMs,
        });
        if (written !== null) return claimed;
      }
    },
  };
}

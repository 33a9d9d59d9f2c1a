import { z } from 'zod';
import {
  type DeliveryRef,
  longestOpenMs,
  NotifyError,
  type TransportStateStore,
} from '../../../core/adapter-kit.js';
import { type DeliveredWith, deliveredEntries, deliveredWith, shownVersions } from '../shown-versions.js';

/** Who may click on a delivered interactive message: its recipient, as Slack and chat-notify know them. */
export interface SlackClicker {
  /** The workspace the message was posted in. */
  teamId: string;
  /** The recipient's Slack user id: the only user whose clicks on the message count. */
  slackUserId: string;
  /** Normalized address of the recipient. */
  recipient: string;
}

/** What a ref says of the message it names. */
export interface SlackMessageRef {
  channel: string;
  ts: string;
  /**
   * What the message was delivered with: the version of its view, the workspace and the recipient's
   * Slack id. Null for a message delivered by an earlier release, whose ref names only the message:
   * what it needs lives in the record of the copy that release kept ({@link SlackCopies.legacy}).
   */
  delivered: DeliveredWith | null;
}

/**
 * The ref of an interactive message: the message (`channel`, `ts`), then what it was delivered with
 * ({@link deliveredEntries}). No record of the copy is kept until its view changes.
 */
export const slackRef = (
  message: { channel: string; ts: string },
  delivered: DeliveredWith,
): DeliveryRef => ({
  channel: message.channel,
  ts: message.ts,
  ...deliveredEntries(delivered),
});

/**
 * What `ref` names. @throws NotifyError `not_found` when it names no message (no `channel` or `ts`).
 */
export function readSlackRef(ref: DeliveryRef): SlackMessageRef {
  const { channel, ts } = ref;
  if (channel === undefined || ts === undefined) {
    throw new NotifyError('not_found', 'Slack delivery reference without channel and ts');
  }
  return { channel, ts, delivered: deliveredWith(ref) };
}

/** How long a finished send is kept when the notifier does not say (a sink of a test). */
const defaultRetentionMs = 14 * 24 * 60 * 60_000;

/** The record an earlier release kept of every interactive message it delivered. */
const copyKey = (channel: string, ts: string): string => `copy:${channel}:${ts}`;

/** The newest version of the view shown on a message, once it changed after its delivery. */
const shownKey = (channel: string, ts: string): string => `shown:${channel}:${ts}`;

/** What an earlier release kept of a copy: who may click on it, of which send, and the newest view. */
export interface LegacySlackCopy extends SlackClicker {
  organizationId: string;
  /** `req_…` of the request the message belongs to. */
  sendId: string;
  /** `MessageView.version` of the newest view applied (or being applied) to the message. */
  lastVersion: number;
}

/**
 * The record of a copy as the release before kept it: a JSON array of its fields in the order of
 * {@link LegacySlackCopy}'s `organizationId`, `teamId`, `sendId`, `recipient`, `slackUserId`,
 * `lastVersion`; or, in releases before that, the object of those fields.
 */
const storedCopy = z.tuple([z.string(), z.string(), z.string(), z.string(), z.string(), z.number()]);

const legacyObject = z.object({
  organizationId: z.string(),
  teamId: z.string(),
  sendId: z.string(),
  recipient: z.string(),
  slackUserId: z.string(),
  lastVersion: z.number(),
});

const encodeLegacy = (copy: LegacySlackCopy): string =>
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
const decodeLegacy = (value: string): LegacySlackCopy | null => {
  const parsed: unknown = JSON.parse(value);
  const stored = storedCopy.safeParse(parsed);
  if (stored.success) {
    const [organizationId, teamId, sendId, recipient, slackUserId, lastVersion] = stored.data;
    return { organizationId, teamId, sendId, recipient, slackUserId, lastVersion };
  }
  return legacyObject.safeParse(parsed).data ?? null;
};

/** What the transport keeps of delivered messages beyond their refs, in its state. */
export interface SlackCopies {
  /** The record an earlier release kept of the message `channel`/`ts`, or null when there is none. */
  legacy(channel: string, ts: string): Promise<LegacySlackCopy | null>;
  /**
   * Takes the right to show the view of `version` on `message`: true when no newer view
   * was shown (recording `version` as the newest), false when a newer one was, or when `version` is
   * the view the message was delivered with and it never changed, so that an older view never
   * replaces a newer one and the view it shows is not sent again.
   * @throws NotifyError `not_found` for a message of an earlier release of which there is no record.
   */
  claim(message: SlackMessageRef, version: number): Promise<boolean>;
  /**
   * Whether a view newer than `version` was claimed for `message`: asked once the view of `version`
   * was shown, which may then have replaced the newer one.
   */
  superseded(message: SlackMessageRef, version: number): Promise<boolean>;
}

/**
 * {@link SlackCopies} over the transport's state. A message delivered now has a record only once its
 * view changed: the newest version shown, kept as long as the notifier keeps its send
 * (`retentionMs`, `ChatSink.retentionMs`) after the longest a request stays open, counted from its
 * last write, like the records of the copies that earlier releases kept.
 */
export function slackCopies(state: TransportStateStore, retentionMs = defaultRetentionMs): SlackCopies {
  const recordOptions = { ttlMs: longestOpenMs + retentionMs };
  const shown = shownVersions(state, recordOptions);

  // Compare-and-set, retried when another update landed in between: of two views racing for one
  // message, the newer always ends up recorded, and the older one learns it is late.
  const claimLegacy = async (channel: string, ts: string, version: number): Promise<boolean> => {
    const key = copyKey(channel, ts);
    for (;;) {
      const record = await state.get(key);
      const copy = record === null ? null : decodeLegacy(record.value);
      if (record === null || copy === null) {
        throw new NotifyError('not_found', `No record of Slack message ${channel}/${ts}`);
      }
      if (version <= copy.lastVersion) return version === copy.lastVersion;
      const claimed = encodeLegacy({ ...copy, lastVersion: version });
      if ((await state.compareAndSet(key, claimed, record.version, recordOptions)) !== null) return true;
    }
  };

  const legacy = async (channel: string, ts: string): Promise<LegacySlackCopy | null> => {
    const record = await state.get(copyKey(channel, ts));
    return record === null ? null : decodeLegacy(record.value);
  };

  return {
    legacy,

    claim: ({ channel, ts, delivered }, version) =>
      delivered === null
        ? claimLegacy(channel, ts, version)
        : shown.claim(shownKey(channel, ts), delivered.version, version),

    async superseded({ channel, ts, delivered }, version) {
      if (delivered !== null) return shown.superseded(shownKey(channel, ts), version);
      const copy = await legacy(channel, ts);
      return copy !== null && copy.lastVersion > version;
    },
  };
}

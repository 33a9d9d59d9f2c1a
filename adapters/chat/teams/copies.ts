import {
  type DeliveryRef,
  longestOpenMs,
  NotifyError,
  type TransportStateStore,
} from '../../../core/adapter-kit.js';
import { type DeliveredWith, deliveredEntries, deliveredWith, shownVersions } from '../shown-versions.js';
import type { AdaptiveCard } from './card.js';
import type { AgentAccount } from './members.js';

/**
 * What an earlier release kept of every interactive message it delivered: where it is, whose it is
 * (only that user's clicks count), and the newest card it shows, which answered a click on it.
 */
export interface LegacyTeamsCopy {
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

/** What a ref says of the message it names. */
export interface TeamsMessageRef {
  conversationId: string;
  activityId: string;
  /**
   * What the message was delivered with: the version of its view, the tenant and the recipient's
   * Teams id. Null for a message delivered by an earlier release, whose ref names only the message:
   * what it needs lives in the record of the copy that release kept ({@link TeamsCopies.legacy}).
   */
  delivered: DeliveredWith | null;
}

/**
 * The ref of an interactive message: the message (`conversationId`, `activityId`), then what it was
 * delivered with ({@link deliveredEntries}). No record of the copy is kept until its view changes.
 */
export const teamsRef = (
  message: { conversationId: string; activityId: string },
  delivered: DeliveredWith,
): DeliveryRef => ({
  conversationId: message.conversationId,
  activityId: message.activityId,
  ...deliveredEntries(delivered),
});

/**
 * What `ref` names. @throws NotifyError `not_found` when it names no message (no `conversationId`
 * or `activityId`).
 */
export function readTeamsRef(ref: DeliveryRef): TeamsMessageRef {
  const { conversationId, activityId } = ref;
  if (conversationId === undefined || activityId === undefined) {
    throw new NotifyError('not_found', 'Teams delivery reference without conversationId and activityId');
  }
  return { conversationId, activityId, delivered: deliveredWith(ref) };
}

/** How long a finished send is kept when the notifier does not say (a sink of a test). */
const defaultRetentionMs = 14 * 24 * 60 * 60_000;

/** The record an earlier release kept of every interactive message it delivered. */
const copyKey = (conversationId: string, activityId: string): string =>
  `copy:${JSON.stringify([conversationId, activityId])}`;

/** The newest version of the card shown on a message, once it changed after its delivery. */
const shownKey = (conversationId: string, activityId: string): string =>
  `shown:${JSON.stringify([conversationId, activityId])}`;

/** What the transport keeps of delivered messages beyond their refs, in its state. */
export interface TeamsCopies {
  /** The record an earlier release kept of a message, or null when there is none. */
  legacy(conversationId: string, activityId: string): Promise<LegacyTeamsCopy | null>;
  /**
   * Takes the right to show the view of `version` (as `card`) on `message`: true when no newer view
   * was shown (recording `version` as the newest), false when a newer one was, or when `version` is
   * the view the message was delivered with and it never changed, so that an older view never
   * replaces a newer one and the card a message shows is not sent again. A message of an earlier
   * release keeps `card` in its record, where instances of that release answer clicks from.
   * @throws NotifyError `not_found` for a message of an earlier release of which there is no record.
   */
  claim(message: TeamsMessageRef, version: number, card: AdaptiveCard): Promise<boolean>;
  /**
   * Whether a view newer than `version` was claimed for `message`: asked once the view of `version`
   * was shown, which may then have replaced the newer one.
   */
  superseded(message: TeamsMessageRef, version: number): Promise<boolean>;
}

/**
 * {@link TeamsCopies} over the transport's state. A message delivered now has a record only once its
 * view changed: the newest version shown, kept as long as the notifier keeps its send
 * (`retentionMs`, `ChatSink.retentionMs`) after the longest a request stays open, counted from its
 * last write, like the records of the copies that earlier releases kept.
 */
export function teamsCopies(state: TransportStateStore, retentionMs = defaultRetentionMs): TeamsCopies {
  const recordOptions = { ttlMs: longestOpenMs + retentionMs };
  const shown = shownVersions(state, recordOptions);

  const legacy = async (conversationId: string, activityId: string): Promise<LegacyTeamsCopy | null> => {
    const record = await state.get(copyKey(conversationId, activityId));
    return record === null ? null : (JSON.parse(record.value) as LegacyTeamsCopy);
  };

  // Compare-and-set, retried when another update landed in between: of two views racing for one
  // message, the newer always ends up recorded, and the older one learns it is late.
  const claimLegacy = async (
    conversationId: string,
    activityId: string,
    version: number,
    card: AdaptiveCard,
  ): Promise<boolean> => {
    const key = copyKey(conversationId, activityId);
    for (;;) {
      const record = await state.get(key);
      if (record === null) {
        throw new NotifyError('not_found', `No record of Teams message ${activityId} in ${conversationId}`);
      }
      const copy = JSON.parse(record.value) as LegacyTeamsCopy;
      if (version < copy.lastVersion) return false;
      const claimed: LegacyTeamsCopy = { ...copy, lastVersion: version, card };
      if ((await state.compareAndSet(key, JSON.stringify(claimed), record.version, recordOptions)) !== null) {
        return true;
      }
    }
  };

  return {
    legacy,

    claim: ({ conversationId, activityId, delivered }, version, card) =>
      delivered === null
        ? claimLegacy(conversationId, activityId, version, card)
        : shown.claim(shownKey(conversationId, activityId), delivered.version, version),

    async superseded({ conversationId, activityId, delivered }, version) {
      if (delivered !== null) return shown.superseded(shownKey(conversationId, activityId), version);
      const copy = await legacy(conversationId, activityId);
      return copy !== null && copy.lastVersion > version;
    },
  };
}

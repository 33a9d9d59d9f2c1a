import type { InboxMessage } from './inbox-message.js';
import { type KeptFields, messageOf, type ShownState, shownLine, versionOf } from './message-record.js';

/**
 * Records of one message each (`msg:<id>`, listed by id), as releases before the records of one
 * send wrote them: still read and updated until they expire. Three forms: the object of the first
 * releases, a one-line array, and the two lines of {@link KeptFields} and a shown line.
 */

/** The id of a message of those releases: `msg_` and 24 letters and digits. */
const legacyId = /^msg_[0-9A-Za-z]{24}$/;

/** Whether `id` names a message kept in a record of its own. */
export const isLegacyId = (id: string): boolean => legacyId.test(id);

/** The key of the record of a message of an earlier release. */
export const legacyKey = (id: string): string => `msg:${id}`;

/** The one-line array form. */
type ArrayMessage = [
  version: number,
  recipient: string,
  organizationId: string,
  requestId: string | null,
  text: string,
  buttons: string[],
  buttonsEnabled: 0 | 1,
  footer: string | null,
  selected: string | null,
  deliveredAt: number,
];

/** The object form. */
interface ObjectMessage {
  version: number;
  message: InboxMessage;
}

/** The version and message of a record in any of its forms. */
export const decodeLegacy = (id: string, value: string): { version: number; message: InboxMessage } => {
  const split = value.indexOf('\n');
  if (split !== -1) {
    const shown = value.slice(split + 1);
    return {
      version: versionOf(shown),
      message: messageOf(id, JSON.parse(value.slice(0, split)) as KeptFields, shown),
    };
  }
  const parsed = JSON.parse(value) as ArrayMessage | ObjectMessage;
  if (!Array.isArray(parsed)) return parsed;
  const [version, recipient, organizationId, requestId, text, flat, enabled, footer, selected, deliveredAt] =
    parsed;
  return {
    version,
    message: messageOf(
      id,
      [recipient, organizationId, requestId, text, deliveredAt],
      JSON.stringify([version, flat, enabled, footer, selected]),
    ),
  };
};

/**
 * The record `value` showing `shown` as the view of `version`, in the two-line form; null when it
 * already shows a newer view. A record in that form keeps its first line as it is.
 */
export const rewriteLegacy = (
  id: string,
  value: string,
  version: number,
  shown: ShownState,
): string | null => {
  const split = value.indexOf('\n');
  if (split !== -1) {
    if (versionOf(value, split + 1) > version) return null;
    return `${value.slice(0, split + 1)}${shownLine(version, shown)}`;
  }
  const earlier = decodeLegacy(id, value);
  if (earlier.version > version) return null;
  const { recipient, organizationId, requestId, text, deliveredAt } = earlier.message;
  const kept: KeptFields = [recipient, organizationId, requestId, text, deliveredAt];
  return `${JSON.stringify(kept)}\n${shownLine(version, { ...earlier.message, ...shown })}`;
};

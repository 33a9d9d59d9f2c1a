import type { InboxMessage } from './inbox-message.js';

/**
 * The parts of a message record, as JSON arrays without property names. What a delivery fixed
 * (`KeptFields`) and what an update changes (`ShownFields`) are lines of their own, so that an update
 * replaces one line without parsing the other (`JSON.stringify` never writes a line break).
 * `version` is `MessageView.version` of the view shown, so that an older view never replaces a newer
 * one; `kind` is implied by `requestId` (an interactive message has one); `buttons` holds text and
 * value of each button in turn.
 */
export type KeptFields = [
  recipient: string,
  organizationId: string,
  requestId: string | null,
  text: string,
  deliveredAt: number,
];
type ShownFields = [
  version: number,
  buttons: string[],
  buttonsEnabled: 0 | 1,
  footer: string | null,
  selected: string | null,
];

/** What an update of a message changes: the parts of its view that follow the request's state. */
export type ShownState = Pick<InboxMessage, 'buttons' | 'buttonsEnabled' | 'footer' | 'selected'>;

const flatButtons = (buttons: ShownState['buttons']): string[] => {
  const flat: string[] = [];
  for (const { text, value } of buttons) flat.push(text, value);
  return flat;
};

/** Whether two states show the same: the same line, for one version. */
export const sameShown = (a: ShownState, b: ShownState): boolean =>
  a.buttonsEnabled === b.buttonsEnabled &&
  a.footer === b.footer &&
  a.selected === b.selected &&
  (a.buttons === b.buttons ||
    (a.buttons.length === b.buttons.length &&
      a.buttons.every(
        (button, index) => button.text === b.buttons[index]?.text && button.value === b.buttons[index]?.value,
      )));

/** The line that shows `shown` as the view of `version`. */
export const shownLine = (version: number, shown: ShownState): string =>
  JSON.stringify([
    version,
    flatButtons(shown.buttons),
    shown.buttonsEnabled ? 1 : 0,
    shown.footer,
    shown.selected,
  ] satisfies ShownFields);

/** The version a shown line is the view of: the integer that opens it (at `start`). */
export const versionOf = (line: string, start = 0): number => {
  let version = 0;
  for (let index = start + 1; index < line.length; index += 1) {
    const digit = line.charCodeAt(index) - 48;
    if (digit < 0 || digit > 9) break;
    version = version * 10 + digit;
  }
  return version;
};

/** The message `id` that `kept` and the shown line `shown` describe. */
export const messageOf = (
  id: string,
  [recipient, organizationId, requestId, text, deliveredAt]: KeptFields,
  shown: string,
): InboxMessage => {
  const [, flat, enabled, footer, selected] = JSON.parse(shown) as ShownFields;
  const buttons: InboxMessage['buttons'] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) buttons.push({ text: flat[i]!, value: flat[i + 1]! });
  return {
    id,
    recipient,
    organizationId,
    kind: requestId === null ? 'plain' : 'interactive',
    requestId,
    text,
    buttons,
    buttonsEnabled: enabled === 1,
    footer,
    selected,
    deliveredAt,
  };
};

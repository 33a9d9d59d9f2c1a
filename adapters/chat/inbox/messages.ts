import type { Clock, TransportStateStore } from '../../../core/adapter-kit.js';
import type { InboxMessage } from './inbox-message.js';

/**
 * The record of one message: a JSON array without property names or the id (which is its key),
 * about half the size of the object it stands for, since every pending copy keeps one.
 * `version` is `MessageView.version` of the view last applied, so that an older view never replaces
 * a newer one; `kind` is implied by `requestId` (an interactive message has one); `buttons` holds
 * text and value of each button in turn.
 */
type StoredMessage = [
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

/** What an update of a message changes: the parts of its view that follow the request's state. */
export type ShownState = Pick<InboxMessage, 'buttons' | 'buttonsEnabled' | 'footer' | 'selected'>;

/** The record as the first releases wrote it, still read (and rewritten in it) until it expires. */
interface LegacyMessage {
  version: number;
  message: InboxMessage;
}

const messageKey = (id: string): string => `msg:${id}`;
const recipientKey = (recipient: string): string => `recipient:${recipient}`;
const epochKey = (recipient: string, epoch: number): string => `recipient:${recipient}:${epoch}`;

const encode = (version: number, message: InboxMessage): string => {
  const buttons: string[] = [];
  for (const { text, value } of message.buttons) buttons.push(text, value);
  const stored: StoredMessage = [
    version,
    message.recipient,
    message.organizationId,
    message.requestId,
    message.text,
    buttons,
    message.buttonsEnabled ? 1 : 0,
    message.footer,
    message.selected,
    message.deliveredAt,
  ];
  return JSON.stringify(stored);
};

/** The message of a record, in either form. */
const decode = (id: string, value: string): InboxMessage => {
  const parsed = JSON.parse(value) as StoredMessage | LegacyMessage;
  if (!Array.isArray(parsed)) return parsed.message;
  const [, recipient, organizationId, requestId, text, flat, enabled, footer, selected, deliveredAt] = parsed;
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

/**
 * The record `value` showing `shown` as the view of `version`, in the form it was written in; null
 * when it already shows a newer view. Works on the parsed array, without building the message.
 */
const rewrite = (value: string, version: number, shown: ShownState): string | null => {
  const parsed = JSON.parse(value) as StoredMessage | LegacyMessage;
  if ((Array.isArray(parsed) ? parsed[0] : parsed.version) > version) return null;
  if (!Array.isArray(parsed)) {
    const message: InboxMessage = { ...parsed.message, ...shownFields(shown) };
    return JSON.stringify({ version, message } satisfies LegacyMessage);
  }
  const buttons: string[] = [];
  for (const button of shown.buttons) buttons.push(button.text, button.value);
  parsed[0] = version;
  parsed[5] = buttons;
  parsed[6] = shown.buttonsEnabled ? 1 : 0;
  parsed[7] = shown.footer;
  parsed[8] = shown.selected;
  return JSON.stringify(parsed);
};

const shownFields = ({ buttons, buttonsEnabled, footer, selected }: ShownState): ShownState => ({
  buttons: buttons.map(({ text, value }) => ({ text, value })),
  buttonsEnabled,
  footer,
  selected,
});

/** The inbox's messages, kept in the transport's own state so that every instance shows the same ones. */
export interface InboxMessages {
  /** Stores a new message, showing the view of `version`, at the end of its recipient's list. */
  add(message: InboxMessage, version: number): Promise<void>;
  /**
   * Makes a message show `shown`, the view of `version`, unless it already shows a newer one (then
   * it is left as it is). Answers false when there is no such message.
   */
  update(id: string, version: number, shown: ShownState): Promise<boolean>;
  /** One message, or null. */
  get(id: string): Promise<InboxMessage | null>;
  /** The messages of a recipient (normalized address), in delivery order. */
  list(recipient: string): Promise<InboxMessage[]>;
}

/** Options of {@link inboxMessages}. */
export interface InboxMessagesOptions {
  /** Where the messages are kept: the transport's `ChatSink.state`. */
  state: TransportStateStore;
  /** Names the period a delivery is listed under. */
  clock: Clock;
  /** How long a message lives after its last write (`ChatSink.retentionMs`); absent: until deleted. */
  retentionMs?: number;
}

/**
 * Messages over a transport-state store: a record `msg:<id>` per message, and lists of message ids
 * in delivery order, so that delivering costs two writes and listing at most three reads, however
 * many messages a recipient has.
 *
 * With a retention, every write gives its record that ttl, and a recipient's ids go to one list per
 * period of the retention's length (`recipient:<address>:<period>`), each living two periods: a
 * message delivered more than one retention ago has expired, so listing reads the current period
 * and the one before it, and an active recipient's lists stop growing instead of being renewed for
 * ever. Without a retention, one list per recipient (`recipient:<address>`) and nothing expires.
 */
export function inboxMessages({ state, clock, retentionMs }: InboxMessagesOptions): InboxMessages {
  const recordOptions = retentionMs === undefined ? undefined : { ttlMs: retentionMs };
  const listOptions = retentionMs === undefined ? undefined : { ttlMs: 2 * retentionMs };
  const period = (): number => (retentionMs === undefined ? 0 : Math.floor(clock.now() / retentionMs));

  const listKeys = (recipient: string): string[] => {
    if (retentionMs === undefined) return [recipientKey(recipient)];
    const current = period();
    return [epochKey(recipient, current - 1), epochKey(recipient, current)];
  };

  return {
    async add(message, version) {
      const list =
        retentionMs === undefined ? recipientKey(message.recipient) : epochKey(message.recipient, period());
      // Neither write waits for the other: until both land, listing skips an id without a record.
      await Promise.all([
        state.set(messageKey(message.id), encode(version, message), recordOptions),
        state.append(list, message.id, listOptions),
      ]);
    },

    async update(id, version, shown) {
      // Updates of one copy can race (several instances, views out of order): compare-and-set on the
      // record makes the newest view win, retrying whenever another update landed in between.
      const key = messageKey(id);
      for (;;) {
        const record = await state.get(key);
        if (record === null) return false;
        const next = rewrite(record.value, version, shown);
        if (next === null) return true;
        const written = await state.compareAndSet(key, next, record.version, recordOptions);
        if (written !== null) {
          return true;
        }
      }
    },

    async get(id) {
      const record = await state.get(messageKey(id));
      return record === null ? null : decode(id, record.value);
    },

    async list(recipient) {
      const ids = (await Promise.all(listKeys(recipient).map((key) => state.readList(key)))).flat();
      const records = ids.length === 0 ? [] : await state.getMany(ids.map(messageKey));
      return records.flatMap((record, index) => (record === null ? [] : [decode(ids[index]!, record.value)]));
    },
  };
}

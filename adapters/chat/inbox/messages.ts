import type { Clock, TransportStateStore } from '../../../core/adapter-kit.js';
import type { InboxMessage } from './inbox-message.js';

/**
 * The record of one message: two JSON arrays without property names or the id (which is its key),
 * about half the size of the object it stands for, since every pending copy keeps one. What a
 * delivery fixed comes first; what an update changes follows on a line of its own, so that an update
 * (every copy of every request that times out) replaces that line without parsing the message
 * (`JSON.stringify` never writes a line break). `version` is `MessageView.version` of the view last
 * applied, so that an older view never replaces a newer one; `kind` is implied by `requestId` (an
 * interactive message has one); `buttons` holds text and value of each button in turn.
 */
type KeptFields = [
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

/** The one-line array of the previous release, still read (and rewritten in the current form). */
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

/** The object of the first releases, still read (and rewritten in the current form). */
interface ObjectMessage {
  version: number;
  message: InboxMessage;
}

const messageKey = (id: string): string => `msg:${id}`;
const recipientKey = (recipient: string): string => `recipient:${recipient}`;
const epochKey = (recipient: string, epoch: number): string => `recipient:${recipient}:${epoch}`;

const flatButtons = (buttons: ShownState['buttons']): string[] => {
  const flat: string[] = [];
  for (const { text, value } of buttons) flat.push(text, value);
  return flat;
};

const shownLine = (version: number, shown: ShownState): string =>
  JSON.stringify([
    version,
    flatButtons(shown.buttons),
    shown.buttonsEnabled ? 1 : 0,
    shown.footer,
    shown.selected,
  ] satisfies ShownFields);

const encode = (version: number, message: InboxMessage): string =>
  `${JSON.stringify([
    message.recipient,
    message.organizationId,
    message.requestId,
    message.text,
    message.deliveredAt,
  ] satisfies KeptFields)}\n${shownLine(version, message)}`;

const messageOf = (
  id: string,
  [recipient, organizationId, requestId, text, deliveredAt]: KeptFields,
  [, flat, enabled, footer, selected]: ShownFields,
): InboxMessage => {
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

/** The version and message of a record in any of its forms. */
const decode = (id: string, value: string): { version: number; message: InboxMessage } => {
  const split = value.indexOf('\n');
  if (split === -1) {
    const parsed = JSON.parse(value) as ArrayMessage | ObjectMessage;
    if (!Array.isArray(parsed)) return parsed;
    const [
      version,
      recipient,
      organizationId,
      requestId,
      text,
      flat,
      enabled,
      footer,
      selected,
      deliveredAt,
    ] = parsed;
    return {
      version,
      message: messageOf(
        id,
        [recipient, organizationId, requestId, text, deliveredAt],
        [version, flat, enabled, footer, selected],
      ),
    };
  }
  const shown = JSON.parse(value.slice(split + 1)) as ShownFields;
  return {
    version: shown[0],
    message: messageOf(id, JSON.parse(value.slice(0, split)) as KeptFields, shown),
  };
};

/** The version a record in the current form shows: the integer that opens its second line. */
const versionAfter = (value: string, split: number): number => {
  let version = 0;
  for (let index = split + 2; index < value.length; index += 1) {
    const digit = value.charCodeAt(index) - 48;
    if (digit < 0 || digit > 9) break;
    version = version * 10 + digit;
  }
  return version;
};

/**
 * The record `value` showing `shown` as the view of `version`, in the current form; null when it
 * already shows a newer view. A record in the current form keeps its first line as it is.
 */
const rewrite = (id: string, value: string, version: number, shown: ShownState): string | null => {
  const split = value.indexOf('\n');
  if (split !== -1) {
    if (versionAfter(value, split) > version) return null;
    return `${value.slice(0, split + 1)}${shownLine(version, shown)}`;
  }
  const earlier = decode(id, value);
  if (earlier.version > version) return null;
  return encode(version, { ...earlier.message, ...shown });
};

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
        const next = rewrite(id, record.value, version, shown);
        if (next === null) return true;
        const written = await state.compareAndSet(key, next, record.version, recordOptions);
        if (written !== null) {
          return true;
        }
      }
    },

    async get(id) {
      const record = await state.get(messageKey(id));
      return record === null ? null : decode(id, record.value).message;
    },

    async list(recipient) {
      const ids = (await Promise.all(listKeys(recipient).map((key) => state.readList(key)))).flat();
      const records = ids.length === 0 ? [] : await state.getMany(ids.map(messageKey));
      return records.flatMap((record, index) =>
        record === null ? [] : [decode(ids[index]!, record.value).message],
      );
    },
  };
}

import type { Clock, TransportStateStore } from '../../../core/adapter-kit.js';
import type { InboxMessage } from './inbox-message.js';

/** What the record of one message holds: the message, and the version of the view it shows. */
interface StoredMessage {
  /** `MessageView.version` of the view last applied, so that an older view never replaces a newer one. */
  version: number;
  message: InboxMessage;
}

const messageKey = (id: string): string => `msg:${id}`;
const recipientKey = (recipient: string): string => `recipient:${recipient}`;
const epochKey = (recipient: string, epoch: number): string => `recipient:${recipient}:${epoch}`;

const parse = (value: string): StoredMessage => JSON.parse(value) as StoredMessage;

/** The inbox's messages, kept in the transport's own state so that every instance shows the same ones. */
export interface InboxMessages {
  /** Stores a new message, showing the view of `version`, at the end of its recipient's list. */
  add(message: InboxMessage, version: number): Promise<void>;
  /**
   * Rewrites a message with `change` to show the view of `version`, unless it already shows a newer
   * one (then it is left as it is). Answers false when there is no such message.
   */
  update(id: string, version: number, change: (message: InboxMessage) => InboxMessage): Promise<boolean>;
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
      const stored: StoredMessage = { version, message };
      const list =
        retentionMs === undefined ? recipientKey(message.recipient) : epochKey(message.recipient, period());
      // Neither write waits for the other: until both land, listing skips an id without a record.
      await Promise.all([
        state.set(messageKey(message.id), JSON.stringify(stored), recordOptions),
        state.append(list, message.id, listOptions),
      ]);
    },

    async update(id, version, change) {
      // Updates of one copy can race (several instances, views out of order): compare-and-set on the
      // record makes the newest view win, retrying whenever another update landed in between.
      for (;;) {
        const record = await state.get(messageKey(id));
        if (record === null) return false;
        const stored = parse(record.value);
        if (stored.version > version) return true;
        const next: StoredMessage = { version, message: change(stored.message) };
        const written = await state.compareAndSet(
          messageKey(id),
          JSON.stringify(next),
          record.version,
          recordOptions,
        );
        if (written !== null) {
          return true;
        }
      }
    },

    async get(id) {
      const record = await state.get(messageKey(id));
      return record === null ? null : parse(record.value).message;
    },

    async list(recipient) {
      const ids = (await Promise.all(listKeys(recipient).map((key) => state.readList(key)))).flat();
      const records = ids.length === 0 ? [] : await state.getMany(ids.map(messageKey));
      return records.flatMap((record) => (record === null ? [] : [parse(record.value).message]));
    },
  };
}

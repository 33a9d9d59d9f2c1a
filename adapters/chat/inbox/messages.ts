import type { Clock, TransportStateStore } from '../../../core/adapter-kit.js';
import { type Copy, copyIds } from './copy-ids.js';
import type { InboxMessage } from './inbox-message.js';
import { decodeLegacy, isLegacyId, legacyKey, rewriteLegacy } from './legacy-records.js';
import {
  type KeptFields,
  messageOf,
  type ShownState,
  sameShown,
  shownLine,
  versionOf,
} from './message-record.js';

/** A copy to deliver: the message less its id (made from the send and the recipient) and kind. */
export interface InboxDelivery extends ShownState {
  /** `req_…` of an interactive send, `notif_…` of a plain one. */
  sendId: string;
  kind: InboxMessage['kind'];
  recipient: string;
  organizationId: string;
  text: string;
  deliveredAt: number;
}

/** The inbox's messages, kept in the transport's own state so that every instance shows the same ones. */
export interface InboxMessages {
  /**
   * Stores the copy of a send to a recipient, showing the view of `version`, at the end of the
   * recipient's list.
   */
  add(delivery: InboxDelivery, version: number): Promise<void>;
  /**
   * Makes a copy show `shown`, the view of `version`, unless it already shows a newer one (then it
   * is left as it is). Answers false when there is no such copy. A string names a message of an
   * earlier release by its id.
   */
  update(copy: Copy | string, version: number, shown: ShownState): Promise<boolean>;
  /** One message, by the id the inbox lists it under, or null. */
  get(id: string): Promise<InboxMessage | null>;
  /** The messages of a recipient (normalized address), in delivery order. */
  list(recipient: string): Promise<InboxMessage[]>;
  /** The id a copy is listed under. */
  idOf(copy: Copy): Promise<string>;
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

/** The record of a send: its kept fields, then the view of its copies without a choice. */
const sendKey = (sendId: string): string => `send:${sendId}`;
/** The view of a copy whose recipient has chosen: a shown line. */
const copyKey = ({ sendId, recipient }: Copy): string => `copy:${sendId}:${recipient}`;
const recipientKey = (recipient: string): string => `recipient:${recipient}`;
const epochKey = (recipient: string, epoch: number): string => `recipient:${recipient}:${epoch}`;

/**
 * Fields of a send's first line: those of a message but its recipient. `interactive` is 1 for an
 * interactive send, whose request id is its send id (the key holds it), and 0 for a plain one;
 * records of the release before hold the request id or null there, which read the same way.
 */
type SendFields = [
  organizationId: string,
  interactive: 0 | 1 | string | null,
  text: string,
  deliveredAt: number,
];

const sendRecord = (delivery: InboxDelivery, shown: string): string =>
  `${JSON.stringify([
    delivery.organizationId,
    delivery.kind === 'interactive' ? 1 : 0,
    delivery.text,
    delivery.deliveredAt,
  ] satisfies SendFields)}\n${shown}`;

/** The version of the view of a send's copies without a choice. */
const sendVersion = (record: string): number => versionOf(record, record.indexOf('\n') + 1);

/** The view of a send's copies without a choice. */
const sendShown = (record: string): string => record.slice(record.indexOf('\n') + 1);

/**
 * Whether a send's record shows the line `shown` as its shared view (compared in place: every update
 * of a copy without a record of its own asks).
 */
const sendShows = (send: string, shown: string): boolean =>
  send.endsWith(shown) && send.charCodeAt(send.length - shown.length - 1) === 10;

/** The message of `copy`, from its send's record and, when it shows another view, its own. */
const composed = (id: string, copy: Copy, send: string, shown: string | undefined): InboxMessage => {
  const [organizationId, interactive, text, deliveredAt] = JSON.parse(
    send.slice(0, send.indexOf('\n')),
  ) as SendFields;
  const kept: KeptFields = [
    copy.recipient,
    organizationId,
    interactive ? copy.sendId : null,
    text,
    deliveredAt,
  ];
  return messageOf(id, kept, shown ?? sendShown(send));
};

/**
 * Messages over a transport-state store, one record per send rather than per copy: every copy of a
 * send shows the same text, and every copy whose recipient has not chosen the same view, so a
 * request to three recipients keeps one record (`send:<send id>`) and one entry in each recipient's
 * list, and its timeout rewrites that one record. A copy gets a record of its own
 * (`copy:<send id>:<recipient>`) once its recipient has chosen; a choice is never withdrawn, so it
 * never shows the shared view again. A copy's id names its send and recipient, signed
 * ({@link copyIds}), so nothing maps ids to copies. Delivering costs one round trip, listing at most
 * three reads.
 *
 * With a retention, every write gives its record that ttl, and every update of a copy renews the
 * send's record: a message lives a retention after the last change of its send. A recipient's
 * send ids go to one list per period of the retention's length (`recipient:<address>:<period>`),
 * each living two periods: a message delivered more than one retention ago has expired, so listing
 * reads the current period and the one before it, and an active recipient's lists stop growing
 * instead of being renewed for ever. Without a retention, one list per recipient
 * (`recipient:<address>`) and nothing expires. Records of one message each, written by earlier
 * releases, are read and updated as they were.
 */
export function inboxMessages({ state, clock, retentionMs }: InboxMessagesOptions): InboxMessages {
  const recordOptions = retentionMs === undefined ? undefined : { ttlMs: retentionMs };
  const listOptions = retentionMs === undefined ? undefined : { ttlMs: 2 * retentionMs };
  const period = (): number => (retentionMs === undefined ? 0 : Math.floor(clock.now() / retentionMs));
  const ids = copyIds(state);

  const listKeys = (recipient: string): string[] => {
    if (retentionMs === undefined) return [recipientKey(recipient)];
    const current = period();
    return [epochKey(recipient, current - 1), epochKey(recipient, current)];
  };

  /**
   * Makes the copies of a send without a choice show the line `shown`, the view of `version`, unless
   * they show a newer one: the views of one version differ only by the recipient's choice, so that
   * view is the second line of the send's record, and a timeout rewrites one record, not one per
   * copy. Answers false when the send has no record.
   */
  const rewriteShared = async (sendId: string, version: number, shown: string): Promise<boolean> => {
    const key = sendKey(sendId);
    // Compare-and-set: of racing views (several instances, views out of order), the newest wins,
    // retrying whenever another write landed in between.
    for (;;) {
      const kept = await state.get(key);
      if (kept === null) return false;
      if (sendShows(kept.value, shown) || sendVersion(kept.value) > version) return true;
      const next = `${kept.value.slice(0, kept.value.indexOf('\n') + 1)}${shown}`;
      if ((await state.compareAndSet(key, next, kept.version, recordOptions)) !== null) return true;
    }
  };

  /** The rewrite of each send's shared view under way in this process, and the view it writes. */
  const rewriting = new Map<string, { version: number; shown: ShownState; done: Promise<boolean> }>();

  /**
   * {@link rewriteShared}, once for the copies of a send updated at once: the updates of one change
   * (every copy without a choice, one view) share the first one's, before writing the line of their
   * view (the line, `shownLine(version, shown)`, when the caller has it already).
   */
  const showShared = (
    sendId: string,
    version: number,
    shown: ShownState,
    line?: string,
  ): Promise<boolean> => {
    const running = rewriting.get(sendId);
    if (running !== undefined && running.version === version && sameShown(running.shown, shown)) {
      return running.done;
    }
    const done = rewriteShared(sendId, version, line ?? shownLine(version, shown));
    rewriting.set(sendId, { version, shown, done });
    const forget = (): void => {
      if (rewriting.get(sendId)?.done === done) rewriting.delete(sendId);
    };
    done.then(forget, forget);
    return done;
  };

  /**
   * Makes a copy whose recipient has chosen show the line `shown`, the view of `version`, in a
   * record of its own, unless it shows a newer one; delivered (`delivering`), it keeps the view it
   * was delivered with even when its send's shared view is newer. Answers false when the send has
   * no record.
   */
  const showOwn = async (
    copy: Copy,
    version: number,
    shown: string,
    delivering: boolean,
  ): Promise<boolean> => {
    const key = copyKey(copy);
    const send = sendKey(copy.sendId);
    for (;;) {
      const [kept, own = null] = await state.getMany([send, key]);
      if (!kept) return false;
      if (own !== null) {
        if (own.value === shown || versionOf(own.value) > version) return true;
        // A delivery keeps the view it was delivered with: no update may know of the copy yet.
      } else if (!delivering && sendVersion(kept.value) > version) return true;
      const [written] = await Promise.all([
        state.compareAndSet(key, shown, own?.version ?? null, recordOptions),
        // The send's record lives as long as its copies change. Rewritten only as it was read: when
        // another write landed in between, that write renewed it, and this one must not undo it.
        recordOptions === undefined
          ? null
          : state.compareAndSet(send, kept.value, kept.version, recordOptions),
      ]);
      if (written !== null) return true;
    }
  };

  const updateLegacy = async (id: string, version: number, shown: ShownState): Promise<boolean> => {
    const key = legacyKey(id);
    for (;;) {
      const record = await state.get(key);
      if (record === null) return false;
      const next = rewriteLegacy(id, record.value, version, shown);
      if (next === null) return true;
      if ((await state.compareAndSet(key, next, record.version, recordOptions)) !== null) return true;
    }
  };

  return {
    async add(delivery, version) {
      const shown = shownLine(version, delivery);
      const key = sendKey(delivery.sendId);
      const copy = { sendId: delivery.sendId, recipient: delivery.recipient };
      const list =
        retentionMs === undefined ? recipientKey(delivery.recipient) : epochKey(delivery.recipient, period());
      // One round trip: none waits for another. Until the record and the list entry both land,
      // listing skips the send. The read, issued after the write, finds the record another copy
      // wrote first, so that a copy with the same view (all of a send's first deliveries) is done.
      const [created, , [kept, own = null]] = await Promise.all([
        state.compareAndSet(key, sendRecord(delivery, shown), null, recordOptions),
        state.append(list, delivery.sendId, listOptions),
        state.getMany([key, copyKey(copy)]),
      ]);
      if (created !== null || (kept && (own ? own.value === shown : sendShows(kept.value, shown)))) return;
      // This copy's view differs from the send's shared one (a delivery tried again after the
      // request changed), or a store that runs the read before the write answered nothing.
      const shows =
        delivery.selected === null
          ? await showShared(delivery.sendId, version, delivery, shown)
          : await showOwn(copy, version, shown, true);
      // The send's record went between the writes and the read (it expired): this copy writes it
      // again, unless another copy just did.
      if (!shows) await state.compareAndSet(key, sendRecord(delivery, shown), null, recordOptions);
    },

    async update(copy, version, shown) {
      if (typeof copy === 'string') return updateLegacy(copy, version, shown);
      return shown.selected === null
        ? showShared(copy.sendId, version, shown)
        : showOwn(copy, version, shownLine(version, shown), false);
    },

    async get(id) {
      if (isLegacyId(id)) {
        const record = await state.get(legacyKey(id));
        return record === null ? null : decodeLegacy(id, record.value).message;
      }
      const copy = await ids.copyOf(id);
      if (copy === null) return null;
      const [send, own] = await state.getMany([sendKey(copy.sendId), copyKey(copy)]);
      return send ? composed(id, copy, send.value, own?.value) : null;
    },

    async list(recipient) {
      const lists = await Promise.all(listKeys(recipient).map((key) => state.readList(key)));
      // A delivery tried again lists its send again: one message per send.
      const entries = [...new Set(lists.flat())];
      const keys = entries.flatMap((entry) =>
        isLegacyId(entry) ? [legacyKey(entry)] : [sendKey(entry), copyKey({ sendId: entry, recipient })],
      );
      const records = keys.length === 0 ? [] : await state.getMany(keys);
      const messages: Promise<InboxMessage>[] = [];
      let at = 0;
      for (const entry of entries) {
        if (isLegacyId(entry)) {
          const record = records[at++];
          if (record) messages.push(Promise.resolve(decodeLegacy(entry, record.value).message));
          continue;
        }
        const send = records[at++];
        const own = records[at++];
        if (!send) continue;
        const copy = { sendId: entry, recipient };
        messages.push(ids.idOf(copy).then((id) => composed(id, copy, send.value, own?.value)));
      }
      return Promise.all(messages);
    },

    idOf: (copy) => ids.idOf(copy),
  };
}

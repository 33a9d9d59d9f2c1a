import {
  type Clock,
  longestOpenMs,
  type TransportStateStore,
  type TransportStateWriteOptions,
} from '../../../core/adapter-kit.js';
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

/** How long a copy may change, as the view it shows says. */
export interface Term {
  /** `MessageView.expiresAt`: when the request times out, null for a plain send. */
  expiresAt: number | null;
  /** Whether the request is open: the view's state is `open`, `answered` or `changeable`. */
  open: boolean;
}

/** A copy to deliver: the message less its id (made from the send and the recipient) and kind. */
export interface InboxDelivery extends ShownState {
  /** `req_…` of an interactive send, `notif_…` of a plain one. */
  sendId: string;
  kind: InboxMessage['kind'];
  recipient: string;
  organizationId: string;
  text: string;
  deliveredAt: number;
  /** Of the view delivered. */
  term: Term;
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
   * earlier release by its id. `term` is that of the view.
   */
  update(copy: Copy | string, version: number, shown: ShownState, term: Term): Promise<boolean>;
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
/** A list of interactive sends that may be open for up to the span of `rank` after delivery. */
const openKey = (rank: number, recipient: string, epoch: number): string =>
  `interactive:${rank}:${recipient}:${epoch}`;

/**
 * How late after its timeout a request may finish and its copies stay listed where their delivery
 * put them: a timeout waits behind other due work. A later finish lists its copies anew.
 */
const listedLagMs = 60_000;

/**
 * How long after its timeout an open request's copies are kept when its finish never updates them
 * (retried until it gives up, or a store that stayed down): as long as Slack's and Teams' records.
 */
const keptLagMs = longestOpenMs;

/**
 * The spans of the lists of interactive sends, longest first: the longest a copy may stay open
 * (plus {@link listedLagMs}), halved while the half is no shorter than the retention and the lag,
 * which every open copy's open time includes. A copy goes to the list of the shortest span that
 * covers its open time, so that no list is kept much longer than the copies in it live: at most
 * twice their open time, or a retention, longer.
 */
const openSpans = (retentionMs: number): number[] => {
  const spans = [longestOpenMs + listedLagMs];
  for (let span = Math.ceil(spans[0]! / 2); span >= Math.max(retentionMs, listedLagMs); ) {
    spans.push(span);
    span = Math.ceil(span / 2);
  }
  return spans;
};

/**
 * The record of the retentions whose lists may hold live messages, each with when a process using it
 * last said so: `[[retentionMs, saidAt], …]`. The lists' names follow the retention, so that an
 * instance with another retention (a changed `NOTIFY_RETENTION_DAYS`, or instances set apart) reads
 * the lists of the others too, and still lists a message while its request is open.
 */
const retentionsKey = 'retentions';

/** How often a process says again that its retention's lists are in use. */
const retentionSaidEveryMs = 60 * 60_000;

/** How long after it was last said a retention's lists may hold live messages: two of its longest periods. */
const retentionListedMs = (retentionMs: number): number =>
  2 * (retentionMs + longestOpenMs + listedLagMs) + retentionSaidEveryMs;

/** The retentions of the record whose lists may hold live messages at `now`, by retention. */
const liveRetentions = (value: string | undefined, now: number): Map<number, number> => {
  const live = new Map<number, number>();
  let entries: unknown = [];
  try {
    entries = JSON.parse(value ?? '[]');
  } catch {
    // Garbage in the record: it is written again by the next process that says its retention.
  }
  if (!Array.isArray(entries)) return live;
  for (const entry of entries) {
    if (!Array.isArray(entry)) continue;
    const [retentionMs, saidAt] = entry as unknown[];
    if (typeof retentionMs !== 'number' || !(retentionMs > 0) || typeof saidAt !== 'number') continue;
    if (saidAt + retentionListedMs(retentionMs) > now) live.set(retentionMs, saidAt);
  }
  return live;
};

/** How long from `now` a copy of `term` stays open, or null when its request is not open. */
const openTime = ({ expiresAt, open }: Term, now: number): number | null =>
  open && expiresAt !== null && Number.isFinite(expiresAt) ? Math.max(0, expiresAt - now) : null;

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

/** A recipient's list a delivery enters its send in, and the options of that append. */
interface ListEntry {
  key: string;
  options?: TransportStateWriteOptions;
}

/**
 * Messages over a transport-state store, one record per send rather than per copy: every copy of a
 * send shows the same text, and every copy whose recipient has not chosen the same view, so a
 * request to three recipients keeps one record (`send:<send id>`) and one entry in each recipient's
 * list, and its timeout rewrites that one record. A copy gets a record of its own
 * (`copy:<send id>:<recipient>`) once its recipient has chosen; a choice is never withdrawn, so it
 * never shows the shared view again. A copy's id names its send and recipient, signed
 * ({@link copyIds}), so nothing maps ids to copies. Delivering costs one round trip, listing at most
 * three rounds of reads, four when an instance of another retention shares the store.
 *
 * With a retention, a message lives a retention after the last change of its send, and never
 * expires while its request is open: every write gives its record a ttl of the retention, plus,
 * while the request is open, the time until its timeout and {@link keptLagMs}; every update of a
 * copy renews the send's record, and its request's finish writes every copy. A recipient's send ids
 * go to lists by period, each period as long as the longest a message entered in it may live from
 * its delivery, and each list read for two periods: listing reads the current period and the one
 * before it, and an active recipient's lists stop growing instead of being renewed for ever. Copies
 * that are not open (plain sends) go to lists of the retention's length
 * (`recipient:<address>:<period>`); open ones to the lists of the span that covers their time until
 * the timeout and {@link listedLagMs} ({@link openSpans}, `interactive:<rank>:<address>:<period>`),
 * so that a request open for a day is listed until it expires without keeping short requests'
 * entries that long; a finish later than that lag lists its copies anew. Without a retention, one
 * list per recipient (`recipient:<address>`) and nothing expires. Records of one message each,
 * written by earlier releases, are read and updated as they were.
 */
export function inboxMessages({ state, clock, retentionMs }: InboxMessagesOptions): InboxMessages {
  const spans = retentionMs === undefined ? [] : openSpans(retentionMs);
  const ids = copyIds(state);

  /** The options of a write, at `now`, of the record of a copy of `term`. */
  const recordOptions = (term: Term, now = clock.now()): TransportStateWriteOptions | undefined => {
    if (retentionMs === undefined) return undefined;
    const open = openTime(term, now);
    return { ttlMs: retentionMs + (open === null ? 0 : open + keptLagMs) };
  };

  /** The list of the period of `length` that `now` falls in, read until two periods from its start. */
  const periodList = (length: number, key: (epoch: number) => string, now: number): ListEntry => {
    const epoch = Math.floor(now / length);
    return { key: key(epoch), options: { ttlMs: (epoch + 2) * length - now } };
  };

  /** The list a copy of `term` delivered at `now` is entered in. */
  const listOf = (recipient: string, term: Term, now = clock.now()): ListEntry => {
    if (retentionMs === undefined) return { key: recipientKey(recipient) };
    const open = openTime(term, now);
    if (open === null) return periodList(retentionMs, (epoch) => epochKey(recipient, epoch), now);
    const listed = open + listedLagMs;
    let rank = 0;
    while (rank + 1 < spans.length && spans[rank + 1]! >= listed) rank += 1;
    return periodList(retentionMs + spans[rank]!, (epoch) => openKey(rank, recipient, epoch), now);
  };

  /**
   * Whether a copy of `term` shows its request's finish later than the list its delivery entered it
   * in is sure to be read: it is then listed anew, for a retention from now, as its record lives. A
   * timeout on time, or a request that finished before it, costs nothing.
   */
  const finishedLate = (term: Term): boolean =>
    retentionMs !== undefined &&
    !term.open &&
    term.expiresAt !== null &&
    clock.now() > term.expiresAt + listedLagMs;

  /**
   * Every list that may hold a live message of `recipient` delivered by a process of `retention`
   * (none: one list): two periods of each length.
   */
  const listKeys = (recipient: string, retention: number | undefined, now: number): string[] => {
    if (retention === undefined) return [recipientKey(recipient)];
    const both = (length: number, key: (epoch: number) => string): string[] => {
      const current = Math.floor(now / length);
      return [key(current - 1), key(current)];
    };
    return [
      ...both(retention, (epoch) => epochKey(recipient, epoch)),
      ...(retention === retentionMs ? spans : openSpans(retention)).flatMap((span, rank) =>
        both(retention + span, (epoch) => openKey(rank, recipient, epoch)),
      ),
    ];
  };

  /** When this process last said its retention's lists are in use; at its first list entry, and hourly. */
  let retentionSaidAt = Number.NEGATIVE_INFINITY;
  /** The first saying of this process while it is under way. */
  let firstSaying: Promise<void> | null = null;

  /** Writes this process's retention into the record of {@link retentionsKey}, dropping those gone. */
  const sayRetention = async (retention: number, now: number): Promise<void> => {
    for (;;) {
      const kept = await state.get(retentionsKey);
      const live = liveRetentions(kept?.value, now);
      live.set(retention, now);
      let ttlMs = 1;
      for (const [each, saidAt] of live) ttlMs = Math.max(ttlMs, saidAt + retentionListedMs(each) - now);
      const value = JSON.stringify([...live]);
      if ((await state.compareAndSet(retentionsKey, value, kept?.version ?? null, { ttlMs })) !== null)
        return;
    }
  };

  /**
   * Says this process's retention when it is due, before it enters a list: the first time, the
   * answer is the write, which the entry waits for, so that no instance of another retention reads
   * the lists before the record names them; later renewals are not waited for. A failure is said
   * again at the next entry.
   */
  const sayRetentionWhenDue = (now: number): Promise<void> | undefined => {
    if (retentionMs === undefined) return undefined;
    if (now - retentionSaidAt < retentionSaidEveryMs) return firstSaying ?? undefined;
    const first = retentionSaidAt === Number.NEGATIVE_INFINITY;
    retentionSaidAt = now;
    const said = sayRetention(retentionMs, now).catch(() => {
      retentionSaidAt = Number.NEGATIVE_INFINITY;
    });
    if (!first) return undefined;
    // Every entry made while the first saying is under way waits for it too.
    const saying = said.finally(() => {
      if (firstSaying === saying) firstSaying = null;
    });
    firstSaying = saying;
    return saying;
  };

  /**
   * Makes the copies of a send without a choice show the line `shown`, the view of `version`, unless
   * they show a newer one: the views of one version differ only by the recipient's choice, so that
   * view is the second line of the send's record, and a timeout rewrites one record, not one per
   * copy. Answers false when the send has no record. `term` is the view's.
   */
  const rewriteShared = async (
    sendId: string,
    version: number,
    shown: string,
    term: Term,
  ): Promise<boolean> => {
    const key = sendKey(sendId);
    // Compare-and-set: of racing views (several instances, views out of order), the newest wins,
    // retrying whenever another write landed in between.
    for (;;) {
      const kept = await state.get(key);
      if (kept === null) return false;
      if (sendShows(kept.value, shown) || sendVersion(kept.value) > version) return true;
      const next = `${kept.value.slice(0, kept.value.indexOf('\n') + 1)}${shown}`;
      if ((await state.compareAndSet(key, next, kept.version, recordOptions(term))) !== null) {
        return true;
      }
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
    term: Term,
    line?: string,
  ): Promise<boolean> => {
    const running = rewriting.get(sendId);
    // One version is one state of the request: one term.
    if (running !== undefined && running.version === version && sameShown(running.shown, shown)) {
      return running.done;
    }
    const done = rewriteShared(sendId, version, line ?? shownLine(version, shown), term);
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
   * no record. `term` is the view's.
   */
  const showOwn = async (
    copy: Copy,
    version: number,
    shown: string,
    term: Term,
    delivering: boolean,
  ): Promise<boolean> => {
    const options = recordOptions(term);
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
        state.compareAndSet(key, shown, own?.version ?? null, options),
        // The send's record lives as long as its copies change. Rewritten only as it was read: when
        // another write landed in between, that write renewed it, and this one must not undo it.
        options === undefined ? null : state.compareAndSet(send, kept.value, kept.version, options),
      ]);
      if (written !== null) return true;
    }
  };

  const updateLegacy = async (
    id: string,
    version: number,
    shown: ShownState,
    term: Term,
  ): Promise<boolean> => {
    const key = legacyKey(id);
    const options = recordOptions(term);
    for (;;) {
      const record = await state.get(key);
      if (record === null) return false;
      const next = rewriteLegacy(id, record.value, version, shown);
      if (next === null) return true;
      if ((await state.compareAndSet(key, next, record.version, options)) !== null) return true;
    }
  };

  return {
    async add(delivery, version) {
      const shown = shownLine(version, delivery);
      const key = sendKey(delivery.sendId);
      const copy = { sendId: delivery.sendId, recipient: delivery.recipient };
      const now = clock.now();
      const options = recordOptions(delivery.term, now);
      const list = listOf(delivery.recipient, delivery.term, now);
      // One round trip: none waits for another. Until the record and the list entry both land,
      // listing skips the send. The read, issued after the write, finds the record another copy
      // wrote first, so that a copy with the same view (all of a send's first deliveries) is done.
      // A copy of a plain send never has a record of its own (there is no choice to make): only its
      // send's is read.
      // Read by index: destructuring an array goes through its iterator, an object per element.
      const saying = sayRetentionWhenDue(now);
      const answers = await Promise.all([
        state.compareAndSet(key, sendRecord(delivery, shown), null, options),
        state.append(list.key, delivery.sendId, list.options),
        state.getMany(delivery.kind === 'interactive' ? [key, copyKey(copy)] : [key]),
      ]);
      // Apart: an entry Promise.all were given would cost every delivery two promises more.
      if (saying !== undefined) await saying;
      const created = answers[0];
      const kept = answers[2][0];
      const own = answers[2][1] ?? null;
      if (created !== null || (kept && (own ? own.value === shown : sendShows(kept.value, shown)))) return;
      // This copy's view differs from the send's shared one (a delivery tried again after the
      // request changed), or a store that runs the read before the write answered nothing.
      const shows =
        delivery.selected === null
          ? await showShared(delivery.sendId, version, delivery, delivery.term, shown)
          : await showOwn(copy, version, shown, delivery.term, true);
      // The send's record went between the writes and the read (it expired): this copy writes it
      // again, unless another copy just did.
      if (!shows) await state.compareAndSet(key, sendRecord(delivery, shown), null, options);
    },

    update(copy, version, shown, term) {
      if (typeof copy === 'string') return updateLegacy(copy, version, shown, term);
      const showing =
        shown.selected === null
          ? showShared(copy.sendId, version, shown, term)
          : showOwn(copy, version, shownLine(version, shown), term, false);
      // Every copy of every request that falls due is updated: one that needs no listing again hands
      // on its write's promise, without a step of its own.
      if (!finishedLate(term)) return showing;
      return showing.then(async (shows) => {
        if (shows) {
          const now = clock.now();
          const list = listOf(copy.recipient, term, now);
          await Promise.all([state.append(list.key, copy.sendId, list.options), sayRetentionWhenDue(now)]);
        }
        return shows;
      });
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
      const now = clock.now();
      const [said, ...own] = await Promise.all([
        state.get(retentionsKey),
        ...listKeys(recipient, retentionMs, now).map((key) => state.readList(key)),
      ]);
      const others = [...liveRetentions(said?.value, now).keys()].filter((each) => each !== retentionMs);
      const lists = [
        ...own,
        ...(await Promise.all(
          others.flatMap((each) => listKeys(recipient, each, now)).map((key) => state.readList(key)),
        )),
      ];
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
      // Lists of several periods and spans: delivery order is the order of delivery times.
      return (await Promise.all(messages)).sort((a, b) => a.deliveredAt - b.deliveredAt);
    },

    idOf: (copy) => ids.idOf(copy),
  };
}

/**
 * Local-inbox messages in MongoDB, one document per message id.
 *
 * Atomicity scheme. `saveMessage` is one upsert by id that replaces every field and sets `seq` (an
 * ObjectId made at the first save) only on insert, so a message saved again keeps its place. Listing
 * sorts by `deliveredAt`, then `seq`, as the memory adapter does.
 *
 * @module
 */
import type { Collection } from 'mongodb';
import { ObjectId } from 'mongodb';
import type { InboxMessage, InboxStore } from '../../../core/ports/inbox-store.js';
import type { InboxDocument } from './collections.js';
import { reportUnavailable } from './unavailable.js';

/** Options of {@link mongoInboxStore}. */
export interface MongoInboxStoreOptions {
  inbox: Collection<InboxDocument>;
}

const toMessage = (document: InboxDocument): InboxMessage => ({
  id: document._id,
  recipient: document.recipient,
  organizationId: document.organizationId,
  kind: document.kind,
  requestId: document.requestId,
  text: document.text,
  buttons: document.buttons.map(({ text, value }) => ({ text, value })),
  buttonsEnabled: document.buttonsEnabled,
  footer: document.footer,
  selected: document.selected,
  deliveredAt: document.deliveredAt,
});

/** Inbox messages by id, listed per recipient in delivery order; see the module comment. */
export function mongoInboxStore({ inbox }: MongoInboxStoreOptions): InboxStore {
  return reportUnavailable({
    async saveMessage({ id, ...fields }) {
      await inbox.updateOne(
        { _id: id },
        { $set: fields, $setOnInsert: { seq: new ObjectId() } },
        { upsert: true },
      );
    },

    async getMessage(id) {
      const document = await inbox.findOne({ _id: id });
      return document === null ? null : toMessage(document);
    },

    async listMessages(recipient) {
      const found = await inbox.find({ recipient }).sort({ deliveredAt: 1, seq: 1 }).toArray();
      return found.map(toMessage);
    },
  } satisfies InboxStore);
}

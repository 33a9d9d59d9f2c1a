import type { InboxMessage, InboxStore } from '../../../core/ports/inbox-store.js';

/** A message and the order of its first save, which breaks ties between equal delivery times. */
interface Stored {
  message: InboxMessage;
  seq: number;
}

/** Inbox messages by id, indexed by recipient. Listing orders by `deliveredAt`, then by first save. */
export function memoryInboxStore(): InboxStore {
  const messages = new Map<string, Stored>();
  const byRecipient = new Map<string, Set<string>>();
  let seq = 0;

  const index = (recipient: string): Set<string> => {
    let ids = byRecipient.get(recipient);
    if (ids === undefined) {
      ids = new Set();
      byRecipient.set(recipient, ids);
    }
    return ids;
  };

  return {
    async saveMessage(message) {
      const previous = messages.get(message.id);
      if (previous !== undefined && previous.message.recipient !== message.recipient) {
        byRecipient.get(previous.message.recipient)?.delete(message.id);
      }
      seq += 1;
      messages.set(message.id, { message: structuredClone(message), seq: previous?.seq ?? seq });
      index(message.recipient).add(message.id);
    },
    async getMessage(id) {
      const stored = messages.get(id);
      return stored === undefined ? null : structuredClone(stored.message);
    },
    async listMessages(recipient) {
      const stored: Stored[] = [];
      for (const id of byRecipient.get(recipient) ?? []) {
        const entry = messages.get(id);
        if (entry !== undefined) stored.push(entry);
      }
      stored.sort((a, b) => a.message.deliveredAt - b.message.deliveredAt || a.seq - b.seq);
      return stored.map((entry) => structuredClone(entry.message));
    },
  } satisfies InboxStore;
}

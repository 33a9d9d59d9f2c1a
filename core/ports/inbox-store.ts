import type { ButtonView } from '../domain/message-view.js';

/** A message in the local inbox, as stored. */
export interface InboxMessage {
  /** `msg_…`. */
  id: string;
  /** Normalized address of the recipient. */
  recipient: string;
  organizationId: string;
  kind: 'plain' | 'interactive';
  /** `req_…` of an interactive message, or null. */
  requestId: string | null;
  /** The message as sent (markdown source). */
  text: string;
  buttons: ButtonView[];
  buttonsEnabled: boolean;
  footer: string | null;
  selected: string | null;
  /** Epoch milliseconds. */
  deliveredAt: number;
}

/** Storage of the local inbox, so that every instance on one store shows the same messages. */
export interface InboxStore {
  /** Adds a new message or replaces the one with the same id. */
  saveMessage(message: InboxMessage): Promise<void>;
  /** One message, or null. */
  getMessage(id: string): Promise<InboxMessage | null>;
  /** Messages of a recipient (normalized address) in delivery order. */
  listMessages(recipient: string): Promise<InboxMessage[]>;
}

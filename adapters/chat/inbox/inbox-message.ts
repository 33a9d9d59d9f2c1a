import type { ButtonView } from '../../../core/adapter-kit.js';

/** A message in the local inbox, as the page and its API show it. */
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

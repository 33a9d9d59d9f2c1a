import type { MarkdownDocument } from '../markdown/ast.js';

/** A button as a platform should draw it. */
export interface ButtonView {
  text: string;
  value: string;
}

/**
 * What one recipient should see, independent of any platform. Each chat transport renders it in
 * its own format; when the request changes, the transport receives a new view for every copy.
 */
export interface MessageView {
  kind: 'plain' | 'interactive';
  /** `notif_…` of a fire-and-forget send, or `req_…` of an interactive one. */
  sendId: string;
  /**
   * Version of the request this view shows (0 for a plain message). Views of one copy can reach a
   * transport out of order (several instances update at once): a transport never replaces a copy
   * showing a higher version with a lower one.
   */
  version: number;
  /** The message as the caller wrote it (docs/http-api.md#message-formatting markdown). */
  text: string;
  /** `text`, parsed once; renderers walk this tree. */
  document: MarkdownDocument;
  /** One per option, in order; empty for plain messages. */
  buttons: ButtonView[];
  /** Whether the buttons can be clicked; when false a platform removes them. */
  buttonsEnabled: boolean;
  /** Value of this recipient's current choice, or null. */
  selected: string | null;
  /** Label of the current choice, or null. */
  selectedText: string | null;
  /**
   * `open`: waiting for this recipient; `answered`: the choice is final (onUserAction); `changeable`:
   * answered but may still change (onTimeout); `expired`: the request ended without an answer;
   * `closed`: the request ended with this recipient's answer; `plain`: nothing to answer.
   */
  state: 'plain' | 'open' | 'answered' | 'changeable' | 'expired' | 'closed';
  /**
   * When the request times out (epoch ms), null for a plain message. Until the request has
   * finished (`state` `expired` or `closed`: at this time, or a little after when its timeout waits
   * behind other work), its copies may change: a transport that keeps what it needs to update a
   * copy (references, the inbox's records) keeps it that long, then for the notifier's retention
   * after the copy's last change.
   */
  expiresAt: number | null;
  /** Validity period and sender (docs/behaviour.md#what-recipients-see), or the outcome once there is one; null for plain messages. */
  footer: string | null;
}

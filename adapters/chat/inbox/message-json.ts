import { normalizeEmail, parseMarkdown, renderHtml, type User } from '../../../core/adapter-kit.js';
import type { InboxMessage } from './inbox-message.js';

/** A user as `GET /inbox/api/users` lists it. */
export interface InboxUserJson {
  email: string;
  name: string;
}

/** A message as `GET /inbox/api/messages` lists it (docs/http-api.md#local-inbox). */
export interface InboxMessageJson {
  id: string;
  kind: 'plain' | 'interactive';
  /** The message as sent (markdown source). */
  text: string;
  /** Safe HTML rendering of `text`. */
  html: string;
  buttons: { text: string; value: string; disabled: boolean }[];
  footer: string | null;
  /** Value currently chosen, or null. */
  selected: string | null;
}

/** The wire form of a stored message; the HTML is rendered on every read so a renderer fix applies to old messages. */
export function toMessageJson(message: InboxMessage): InboxMessageJson {
  const disabled = !message.buttonsEnabled;
  return {
    id: message.id,
    kind: message.kind,
    text: message.text,
    html: renderHtml(parseMarkdown(message.text)),
    buttons: message.buttons.map(({ text, value }) => ({ text, value, disabled })),
    footer: message.footer,
    selected: message.selected,
  };
}

/**
 * The users to pick from, one per address, sorted by address. A person in several organizations
 * has one inbox, because the inbox keys messages by normalized address.
 */
export function toUserListJson(users: readonly User[]): InboxUserJson[] {
  const byAddress = new Map<string, InboxUserJson>();
  for (const user of users) {
    const address = normalizeEmail(user.email);
    if (!byAddress.has(address)) byAddress.set(address, { email: user.email.trim(), name: user.name });
  }
  return [...byAddress.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, user]) => user);
}

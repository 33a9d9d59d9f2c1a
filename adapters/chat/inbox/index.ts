/**
 * The local inbox: a chat platform that keeps messages in storage and shows them on a web page,
 * for development, demos and tests (docs/http-api.md#local-inbox).
 */
export type { InboxMessageJson, InboxUserJson } from './message-json.js';
export { type InboxTransportOptions, inboxTransport } from './transport.js';

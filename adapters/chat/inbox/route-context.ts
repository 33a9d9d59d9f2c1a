import type { ChatSink, HttpRequest, HttpResponse } from '../../../core/adapter-kit.js';
import type { InboxMessages } from './messages.js';

/** What an inbox route handler works with once the notifier has connected the transport. */
export interface ConnectedContext {
  messages: InboxMessages;
  sink: ChatSink;
}

/** A route handler that runs only once a sink is connected. */
export type ConnectedHandler = (
  context: ConnectedContext,
  request: HttpRequest,
  params: Readonly<Record<string, string>>,
) => Promise<HttpResponse>;

import { errorResponse } from '../../../core/http/responses.js';
import type { Route } from '../../../core/http/types.js';
import type { ChatSink } from '../../../core/ports/chat-transport.js';
import type { InboxStore } from '../../../core/ports/inbox-store.js';
import { handleClick } from './click-route.js';
import { handleListMessages, handleListUsers } from './list-routes.js';
import { handlePage } from './page-route.js';
import type { ConnectedHandler } from './route-context.js';

/** What the inbox routes need: the store, and the sink once the notifier has connected. */
export interface InboxRouteContext {
  store: InboxStore;
  /** The connected sink, or null before `connect`. */
  sink: () => ChatSink | null;
}

/** The page and JSON API of the inbox, with paths relative to the hosts' mount point. */
export function inboxRoutes(context: InboxRouteContext): readonly Route[] {
  const route = (method: Route['method'], path: string, handler: ConnectedHandler): Route => ({
    method,
    path,
    async handle(request, params) {
      const sink = context.sink();
      // A route can be mounted before the notifier connects the transport; clicks would have nowhere to go.
      if (sink === null) {
        return errorResponse(503, 'The inbox is not connected to a notifier yet', { 'retry-after': '1' });
      }
      return handler({ store: context.store, sink }, request, params);
    },
  });

  return [
    route('GET', '/inbox', handlePage),
    route('GET', '/inbox/api/users', handleListUsers),
    route('GET', '/inbox/api/messages', handleListMessages),
    route('POST', '/inbox/api/messages/:id/click', handleClick),
  ];
}

import { errorResponse, type Route } from '../../../core/adapter-kit.js';
import { isAllowedHost } from './allowed-hosts.js';
import { handleClick } from './click-route.js';
import { handleListMessages, handleListUsers } from './list-routes.js';
import { handlePage } from './page-route.js';
import type { ConnectedContext, ConnectedHandler } from './route-context.js';

/**
 * The page and JSON API of the inbox, with paths relative to the hosts' mount point. `connected`
 * answers the messages and the sink once the notifier has connected the transport, null before;
 * `allowedHosts` the names of the `Host` header answered besides `localhost` and IP addresses.
 */
export function inboxRoutes(
  connected: () => ConnectedContext | null,
  allowedHosts: ReadonlySet<string> | true,
): readonly Route[] {
  const route = (method: Route['method'], path: string, handler: ConnectedHandler): Route => ({
    method,
    path,
    async handle(request, params) {
      const host = request.headers.host;
      if (!isAllowedHost(host, allowedHosts)) {
        return errorResponse(
          403,
          `The inbox does not answer requests for the host ${JSON.stringify(host)}: only localhost, IP addresses and the names of its allowedHosts (NOTIFY_INBOX_HOSTS in the standalone service)`,
        );
      }
      const context = connected();
      // A route can be mounted before the notifier connects the transport; clicks would have nowhere to go.
      if (context === null) {
        return errorResponse(503, 'The inbox is not connected to a notifier yet', { 'retry-after': '1' });
      }
      return handler(context, request, params);
    },
  });

  return [
    route('GET', '/inbox', handlePage),
    // Typed or completed with a slash at its end: the page's script finds its API either way.
    route('GET', '/inbox/', handlePage),
    route('GET', '/inbox/api/users', handleListUsers),
    route('GET', '/inbox/api/messages', handleListMessages),
    route('POST', '/inbox/api/messages/:id/click', handleClick),
  ];
}

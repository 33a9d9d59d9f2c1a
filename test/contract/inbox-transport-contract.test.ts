import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import type { HttpRequest, HttpResponse, Route } from '../../core/http/types.js';
import { chatTransportContract, type SeenMessage } from '../../testing/index.js';

interface InboxMessageJson {
  id: string;
  text: string;
  buttons: { text: string; value: string; disabled: boolean }[];
  footer: string | null;
}

chatTransportContract('inbox', {
  identifiesClicker: false,
  async create({ clock }) {
    const transport = inboxTransport({ clock });
    const call = async (method: Route['method'], path: string, body = ''): Promise<HttpResponse> => {
      const url = new URL(path, 'http://inbox.test');
      for (const route of transport.routes) {
        const pattern = new RegExp(`^${route.path.replace(/:([a-z]+)/g, '(?<$1>[^/]+)')}$`);
        const match = pattern.exec(url.pathname);
        if (route.method !== method || !match) continue;
        const request: HttpRequest = {
          method,
          path: url.pathname,
          query: url.searchParams,
          headers: { 'content-type': 'application/json' },
          body: new TextEncoder().encode(body),
          clientAddress: '127.0.0.1',
        };
        return route.handle(request, { ...match.groups });
      }
      throw new Error(`the inbox serves no ${method} ${url.pathname}`);
    };
    const list = async (email: string): Promise<InboxMessageJson[]> => {
      const response = await call('GET', `/inbox/api/messages?email=${encodeURIComponent(email)}`);
      if (response.status !== 200) throw new Error(`listing failed: ${response.status} ${response.body}`);
      return JSON.parse(response.body) as InboxMessageJson[];
    };
    return {
      transport,
      async seen(email): Promise<SeenMessage[]> {
        return (await list(email)).map((message) => ({
          text: message.text,
          buttons: message.buttons
            .filter((button) => !button.disabled)
            .map(({ text, value }) => ({ text, value })),
          footer: message.footer,
        }));
      },
      async click({ owner, index, value }) {
        const message = (await list(owner))[index];
        if (!message) throw new Error(`${owner} has no message ${index}`);
        await call('POST', `/inbox/api/messages/${message.id}/click`, JSON.stringify({ value }));
      },
      async close() {},
    };
  },
});

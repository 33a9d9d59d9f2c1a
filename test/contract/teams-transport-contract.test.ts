import { beforeAll } from 'vitest';
import { fixedTeamsTenants, teamsTransport } from '../../adapters/chat/teams/index.js';
import { normalizeEmail } from '../../core/domain/directory.js';
import type { HttpResponse } from '../../core/http/types.js';
import type { ChatTransport } from '../../core/ports/chat-transport.js';
import { chatTransportContract } from '../../testing/index.js';
import { type FakeTeamsUser, startFakeBotConnector } from '../support/fake-bot-connector.js';
import { startLocalOpenIdAuthority } from '../support/local-openid-authority.js';

const appId = '00000000-0000-4000-8000-00000000b0a7';
const appTenantId = '11111111-1111-4111-8111-111111111111';
const customerTenant = '22222222-2222-4222-8222-222222222222';
const outboundToken = 'contract-outbound-token';

beforeAll(() => {
  // The Agents SDK reads connection settings from these when it is not given them.
  for (const name of Object.keys(process.env)) if (/^connections/i.test(name)) delete process.env[name];
});

chatTransportContract('teams', {
  identifiesClicker: true,
  async create({ organizationId, users }) {
    const authority = await startLocalOpenIdAuthority({ tenantId: appTenantId });
    const teamsUsers = new Map<string, FakeTeamsUser>(
      users.map((user, index) => [
        normalizeEmail(user.email),
        {
          id: `29:contract-user-${index}`,
          aadObjectId: `aad-contract-${index}`,
          name: user.name,
          email: user.email,
          tenantId: customerTenant,
        },
      ]),
    );
    const idOf = (email: string): string => {
      const user = teamsUsers.get(normalizeEmail(email));
      if (!user) throw new Error(`no Teams user for ${email}`);
      return user.id;
    };
    const connector = await startFakeBotConnector({
      appId,
      acceptToken: (token) => token === outboundToken,
      users: [...teamsUsers.values()],
    });
    const transport = teamsTransport({
      appId,
      appTenantId,
      authority: authority.authority,
      tenants: fixedTeamsTenants({ [organizationId]: customerTenant }),
      tokenProvider: { getAccessToken: async () => outboundToken },
      retry: { retries: 1, minDelayMs: 1, maxDelayMs: 50 },
    });
    const [route] = transport.routes;
    if (!route) throw new Error('the Teams transport serves no route');

    const post = async (activity: unknown): Promise<HttpResponse> => {
      const token = authority.activityToken({ audience: appId, serviceUrl: connector.serviceUrl });
      return route.handle(
        {
          method: 'POST',
          path: route.path,
          query: new URLSearchParams(),
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: new TextEncoder().encode(JSON.stringify(activity)),
          clientAddress: '127.0.0.1',
        },
        {},
      );
    };

    // Teams reaches a user only once they installed the app: everyone installs it as soon as the
    // notifier has connected the transport, before the first address is asked for.
    let installed: Promise<void> = Promise.resolve();
    const installEveryone = async () => {
      for (const user of teamsUsers.values()) {
        for (const activity of connector.installActivities(user.id)) {
          const response = await post(activity);
          if (response.status !== 200) throw new Error(`installation answered ${response.status}`);
        }
      }
    };
    const harnessed: ChatTransport = {
      platform: transport.platform,
      routes: transport.routes,
      connect(sink) {
        // The contract's click resolves once the click was handled, the updates it made included:
        // the harness has the sink resolve Teams' clicks once their copies were updated.
        transport.connect({ ...sink, click: (click) => sink.click(click) });
        installed = installEveryone();
        // Seen by the first address asked for; a test that stops at once (the stop test) asks none.
        installed.catch(() => undefined);
      },
      async address(user, organization) {
        await installed;
        return transport.address(user, organization);
      },
      deliver: (delivery) => transport.deliver(delivery),
      update: (delivery, ref) => transport.update(delivery, ref),
      drain: async () => transport.drain?.(),
      close: async () => transport.close?.(),
    };

    return {
      transport: harnessed,
      async seen(email) {
        return connector
          .messagesOf(idOf(email))
          .map(({ text, buttons, footer }) => ({ text, buttons, footer }));
      },
      async click({ owner, index, value, clicker }) {
        const message = connector.messagesOf(idOf(owner))[index];
        if (!message) throw new Error(`${owner} has no message ${index}`);
        const response = await post(connector.clickActivity(message, value, idOf(clicker ?? owner)));
        if (response.status !== 200) throw new Error(`the click was answered ${response.status}`);
        connector.receiveInvokeAnswer(message, JSON.parse(response.body));
      },
      async makeUnreachable(email) {
        // Installing unblocks: the user removes the app after installing it, not before.
        await installed;
        connector.block(idOf(email));
      },
      async close() {
        const { violations } = connector;
        await Promise.all([connector.close(), authority.close()]);
        if (violations.length > 0)
          throw new Error(`the fake Bot Connector saw violations: ${violations.join('; ')}`);
      },
    };
  },
});

import { expect } from 'vitest';
import { slackTransport } from '../../adapters/chat/slack/index.js';
import { normalizeEmail } from '../../core/domain/directory.js';
import { chatTransportContract } from '../../testing/index.js';
import { startFakeSlack } from '../support/fake-slack.js';
import { postInteraction } from '../support/slack-clicks.js';
import { testSigningSecret } from '../support/slack-signing.js';

const teamId = 'T0CONTRACT';
const botToken = 'xoxb-contract-token';

chatTransportContract('slack', {
  identifiesClicker: true,
  async create({ organizationId, users, clock }) {
    const ids = new Map(users.map((user, index) => [normalizeEmail(user.email), `U0CONTRACT${index}`]));
    const idOf = (email: string): string => {
      const id = ids.get(normalizeEmail(email));
      if (id === undefined) throw new Error(`no Slack user for ${email}`);
      return id;
    };
    const slack = await startFakeSlack([
      { teamId, botToken, users: users.map((user) => ({ id: idOf(user.email), email: user.email })) },
    ]);
    const transport = slackTransport({
      signingSecret: testSigningSecret,
      apiUrl: slack.apiUrl,
      installation: (organization) => (organization === organizationId ? { teamId, botToken } : null),
      clock,
      retry: { retries: 1, minDelayMs: 0, maxDelayMs: 1 },
    });
    return {
      transport,
      async seen(email) {
        return slack.messagesOf(teamId, idOf(email)).map((message) => ({
          text: message.sections,
          buttons: message.buttons.map(({ text, value }) => ({ text, value })),
          footer: message.footer,
        }));
      },
      async click({ owner, index, value, clicker }) {
        const message = slack.messagesOf(teamId, idOf(owner))[index];
        if (!message) throw new Error(`${owner} has no message ${index}`);
        const body = slack.clickBody({
          teamId,
          userId: idOf(clicker ?? owner),
          channel: message.channel,
          ts: message.ts,
          value,
        });
        const response = await postInteraction(transport, body, clock.now() / 1000);
        if (response.status !== 200) throw new Error(`the click was answered ${response.status}`);
        await transport.idle();
      },
      async makeUnreachable(email) {
        slack.removeUser(teamId, idOf(email));
      },
      async close() {
        expect(slack.violations).toEqual([]);
        await slack.close();
      },
    };
  },
});

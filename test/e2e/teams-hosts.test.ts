import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Koa from 'koa';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { type SlackTransport, slackTransport } from '../../adapters/chat/slack/index.js';
import { fixedTeamsTenants, teamsTransport } from '../../adapters/chat/teams/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { createNotifier, type Notifier } from '../../core/notifier.js';
import { notifyRouter } from '../../hosts/express/index.js';
import { notifyMiddleware } from '../../hosts/koa/index.js';
import {
  type FakeBotConnector,
  type FakeTeamsMessage,
  type FakeTeamsUser,
  startFakeBotConnector,
} from '../support/fake-bot-connector.js';
import { type FakeSlack, startFakeSlack } from '../support/fake-slack.js';
import { type LocalOpenIdAuthority, startLocalOpenIdAuthority } from '../support/local-openid-authority.js';
import { type ManualClock, manualClock } from '../support/manual-clock.js';
import { slackSignatureHeaders, testSigningSecret } from '../support/slack-signing.js';
import { acmeWorkspace, fastRetry, slackIdOf, testInstallations } from '../support/slack-workspace.js';
import { testKeys, testSeed } from '../support/test-seed.js';

const appId = '00000000-0000-4000-8000-0000000e2e01';
const appTenantId = '11111111-1111-4111-8111-111111111111';
const acmeTenant = '66666666-6666-4666-8666-666666666666';
const outbound = 'e2e-outbound-token';
const bob = 'bob@acme.test';
const carol = 'carol@acme.test';
const options = [
  { text: 'Approve', value: 'approve' },
  { text: 'Reject', value: 'reject' },
];

const teamsUser = (name: string): FakeTeamsUser => ({
  id: `29:${name}`,
  aadObjectId: `aad-${name}`,
  name,
  email: `${name}@acme.test`,
  tenantId: acmeTenant,
});
const teamsBob = teamsUser('bob');
const teamsCarol = teamsUser('carol');

type HostKind = 'express' | 'koa';

/** An application with the API at `/chat`, on Teams, Slack and the inbox at once, in virtual time. */
interface App {
  baseUrl: string;
  clock: ManualClock;
  notifier: Notifier;
  authority: LocalOpenIdAuthority;
  connector: FakeBotConnector;
  slack: FakeSlack;
  slackTransport: SlackTransport;
  close(): Promise<void>;
}

function application(kind: HostKind, notifier: Notifier): RequestListener {
  if (kind === 'express') {
    const app = express();
    app.use('/chat', notifyRouter(notifier));
    return app;
  }
  const app = new Koa();
  app.use(notifyMiddleware(notifier, { prefix: '/chat' }));
  return app.callback();
}

async function startApp(kind: HostKind): Promise<App> {
  const authority = await startLocalOpenIdAuthority({ tenantId: appTenantId });
  const connector = await startFakeBotConnector({
    appId,
    acceptToken: (token) => token === outbound,
    users: [teamsBob, teamsCarol],
  });
  const slack = await startFakeSlack([acmeWorkspace()]);
  const clock = manualClock(Date.parse('2026-03-01T09:00:00.000Z'));
  const slackChat = slackTransport({
    signingSecret: testSigningSecret,
    apiUrl: slack.apiUrl,
    installation: testInstallations,
    retry: fastRetry,
    clock,
  });
  const teams = teamsTransport({
    appId,
    appTenantId,
    authority: authority.authority,
    tenants: fixedTeamsTenants({ acme: acmeTenant }),
    tokenProvider: { getAccessToken: async () => outbound },
    retry: { retries: 1, minDelayMs: 1, maxDelayMs: 50 },
  });
  const notifier = createNotifier({
    storage: memoryStorage({ clock }),
    transports: [teams, slackChat, inboxTransport({ clock })],
    clock,
    rateLimits: {
      perKey: { burst: 1000, perSecond: 1000 },
      perOrganization: { burst: 1000, perSecond: 1000 },
    },
  });
  await notifier.seed(testSeed);
  const server: Server = createServer(application(kind, notifier));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/chat`,
    clock,
    notifier,
    authority,
    connector,
    slack,
    slackTransport: slackChat,
    async close() {
      server.closeAllConnections();
      server.close();
      await notifier.stop();
      await Promise.all([connector.close(), authority.close(), slack.close()]);
    },
  };
}

beforeAll(() => {
  for (const name of Object.keys(process.env)) if (/^connections/i.test(name)) delete process.env[name];
});

describe.each<HostKind>(['express', 'koa'])('Teams end to end through the %s host', (kind) => {
  let app: App | undefined;

  afterEach(async () => {
    const violations = [...(app?.connector.violations ?? []), ...(app?.slack.violations ?? [])];
    await app?.close();
    app = undefined;
    expect(violations).toEqual([]);
  });

  const start = async (): Promise<App> => {
    app = await startApp(kind);
    return app;
  };

  /** POSTs an activity to the bot's endpoint as Teams would, with a token from the local authority. */
  const postActivity = async (target: App, activity: unknown, authorization?: string) => {
    const token = target.authority.activityToken({
      audience: appId,
      serviceUrl: target.connector.serviceUrl,
    });
    const response = await fetch(`${target.baseUrl}/teams/messages`, {
      method: 'POST',
      headers: { authorization: authorization ?? `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(activity),
    });
    return { status: response.status, text: await response.text() };
  };

  const install = async (target: App, ...users: FakeTeamsUser[]) => {
    for (const installing of users) {
      for (const activity of target.connector.installActivities(installing.id)) {
        expect((await postActivity(target, activity)).status).toBe(200);
      }
    }
  };

  const clickOnTeams = async (target: App, message: FakeTeamsMessage, value: string) => {
    const answer = await postActivity(target, target.connector.clickActivity(message, value));
    expect(answer.status).toBe(200);
    const body = JSON.parse(answer.text) as { statusCode: number; type: string };
    target.connector.receiveInvokeAnswer(message, body);
    return body;
  };

  const api = async (target: App, path: string, body?: unknown) => {
    const response = await fetch(`${target.baseUrl}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'x-api-key': testKeys.alice, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  const ask = async (target: App, recipients: string[]) => {
    const answer = await api(target, '/api/notify', {
      user_emails: recipients,
      message: 'Deploy *v2* to production?',
      response_request: { options, timeout_minutes: 60 },
    });
    expect(answer.status).toBe(200);
    return answer.json.request_id as string;
  };

  const answerOf = async (target: App, requestId: string, email: string) => {
    const { json } = await api(target, `/api/notify/status/${requestId}`);
    const responses = json.responses as {
      user_email: string;
      option_value: string | null;
      expired: boolean;
    }[];
    return responses.find((response) => response.user_email === email);
  };

  const inboxOf = async (target: App, email: string) => {
    const response = await fetch(`${target.baseUrl}/inbox/api/messages?email=${encodeURIComponent(email)}`);
    return (await response.json()) as {
      id: string;
      buttons: { disabled: boolean }[];
      footer: string | null;
    }[];
  };

  const only = (target: App, user: FakeTeamsUser) => {
    const messages = target.connector.messagesOf(user.id);
    expect(messages).toHaveLength(1);
    return messages[0]!;
  };

  it('refuses an activity without a valid token with 401 in the error shape, reading the raw body', async () => {
    const target = await start();
    const [installation] = target.connector.installActivities(teamsBob.id);
    const expired = target.authority.activityToken({
      audience: appId,
      serviceUrl: target.connector.serviceUrl,
      expiresInSeconds: -600,
    });
    for (const authorization of ['', `Bearer ${expired}`, 'Bearer garbage']) {
      const answer = await postActivity(target, installation, authorization);
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.text)).toEqual({ status: 'error', details: expect.any(String) });
    }
    expect(target.connector.calls).toEqual([]);
  });

  it('installs, sends, takes a click and updates every copy, on Teams, Slack and the inbox', async () => {
    const target = await start();
    await install(target, teamsBob, teamsCarol);
    const requestId = await ask(target, [bob, carol]);
    const open = only(target, teamsBob);
    expect(open.buttons).toEqual(options);
    expect(open.footer).toContain('Sent by Alice Doe');

    // Bob answers on Teams: the invoke's answer replaces his card; Slack and the inbox follow.
    target.clock.advance(30_000);
    const answer = await clickOnTeams(target, open, 'approve');
    expect(answer.type).toBe('application/vnd.microsoft.card.adaptive');
    expect(await answerOf(target, requestId, bob)).toMatchObject({ option_value: 'approve' });
    expect(only(target, teamsBob)).toMatchObject({ buttons: [], footer: expect.stringContaining('Approve') });
    const [bobOnSlack] = target.slack.messagesOf('T0ACME', slackIdOf(bob));
    expect(bobOnSlack?.buttons).toEqual([]);
    expect(bobOnSlack?.footer).toContain('Approve');
    const [bobInInbox] = await inboxOf(target, bob);
    expect(bobInInbox?.buttons.every((button) => button.disabled)).toBe(true);

    // Carol answers in the inbox: her Teams card is updated, and the request finishes.
    const [carolInInbox] = await inboxOf(target, carol);
    const click = await fetch(`${target.baseUrl}/inbox/api/messages/${carolInInbox?.id}/click`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ value: 'reject' }),
    });
    expect(click.status).toBe(200);
    expect(only(target, teamsCarol)).toMatchObject({
      buttons: [],
      footer: expect.stringContaining('Reject'),
    });
    expect(only(target, teamsBob).footer).toContain('Closed. Your answer: “Approve”');
    expect(
      target.connector
        .callsTo('update')
        .map((call) => call.conversationId)
        .sort(),
    ).toEqual(
      [
        target.connector.personalConversationOf(teamsBob.id),
        target.connector.personalConversationOf(teamsCarol.id),
      ].sort(),
    );
  });

  it('updates the Teams card after an answer on Slack', async () => {
    const target = await start();
    await install(target, teamsBob, teamsCarol);
    const requestId = await ask(target, [bob, carol]);
    const [message] = target.slack.messagesOf('T0ACME', slackIdOf(bob));
    const body = target.slack.clickBody({
      teamId: 'T0ACME',
      userId: slackIdOf(bob),
      channel: message?.channel ?? '',
      ts: message?.ts ?? '',
      value: 'reject',
    });
    const response = await fetch(`${target.baseUrl}/slack/interactivity`, {
      method: 'POST',
      headers: slackSignatureHeaders(body, target.clock.now() / 1000),
      body,
    });
    expect(response.status).toBe(200);
    await target.slackTransport.idle();
    expect(await answerOf(target, requestId, bob)).toMatchObject({ option_value: 'reject' });
    expect(only(target, teamsBob)).toMatchObject({ buttons: [], footer: expect.stringContaining('Reject') });
    expect(only(target, teamsCarol).buttons).toEqual(options);
  });

  it('shows the expiry on every Teams card at the timeout', async () => {
    const target = await start();
    await install(target, teamsBob, teamsCarol);
    const requestId = await ask(target, [bob, carol]);
    const open = only(target, teamsBob);
    target.clock.advance(60 * 60_000);
    await target.notifier.runDueWork();
    expect(await answerOf(target, requestId, bob)).toMatchObject({ option_value: null, expired: true });
    for (const user of [teamsBob, teamsCarol]) {
      expect(only(target, user)).toMatchObject({ buttons: [], footer: expect.stringMatching(/expired at/) });
    }
    // A click from a client still showing the open card changes nothing, and gets the expired card.
    const late = await clickOnTeams(target, open, 'approve');
    expect(JSON.stringify(late)).toMatch(/expired at/);
    expect(await answerOf(target, requestId, bob)).toMatchObject({ option_value: null, expired: true });
  });
});

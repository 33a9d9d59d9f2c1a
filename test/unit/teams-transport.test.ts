import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { adaptiveCard } from '../../adapters/chat/teams/card.js';
import { fixedTeamsTenants, teamsTransport } from '../../adapters/chat/teams/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import type { HttpResponse } from '../../core/http/types.js';
import { createNotifier, type Notifier } from '../../core/notifier.js';
import type { ChatTransport } from '../../core/ports/chat-transport.js';
import type { LogFields, Logger } from '../../core/ports/logger.js';
import type { StoragePorts } from '../../core/ports/storage.js';
import { requestView } from '../../core/request/message-view.js';
import {
  type FakeBotConnector,
  type FakeTeamsMessage,
  type FakeTeamsUser,
  startFakeBotConnector,
} from '../support/fake-bot-connector.js';
import { type LocalOpenIdAuthority, startLocalOpenIdAuthority } from '../support/local-openid-authority.js';
import { type ManualClock, manualClock } from '../support/manual-clock.js';
import { testKeys, testSeed } from '../support/test-seed.js';

const appId = '00000000-0000-4000-8000-0000000a0002';
const appTenantId = '11111111-1111-4111-8111-111111111111';
const acmeTenant = '33333333-3333-4333-8333-333333333333';
const otherTenant = '44444444-4444-4444-8444-444444444444';
const outbound = 'outbound-token';
const options = [
  { text: 'Approve', value: 'approve' },
  { text: 'Reject', value: 'reject' },
];

const user = (name: string, overrides: Partial<FakeTeamsUser> = {}): FakeTeamsUser => ({
  id: `29:${name}`,
  aadObjectId: `aad-${name}`,
  name,
  email: `${name}@acme.test`,
  tenantId: acmeTenant,
  ...overrides,
});

const bob = user('bob');
const carol = user('carol', { email: 'Carol@Acme.test' });
const dave = user('dave', { email: null, userPrincipalName: 'dave@acme.test' });
const user01 = user('user01', { email: null, userPrincipalName: null });
const mallory = user('mallory', { email: 'alice@acme.test', tenantId: otherTenant });

interface World {
  authority: LocalOpenIdAuthority;
  connector: FakeBotConnector;
  transport: ChatTransport;
  storage: StoragePorts;
  notifier: Notifier;
  /** Instances made by {@link World.another}, stopped with the world. */
  others: Notifier[];
  /** Another instance of the service on the same storage: its notifier, and how to post activities to it. */
  another(): { notifier: Notifier; post: World['post'] };
  clock: ManualClock;
  logs: string[];
  /** Posts an activity as Teams would, with a token for `serviceUrl` (the fake's own by default). */
  post(activity: unknown, serviceUrl?: string): Promise<HttpResponse>;
  install(...users: FakeTeamsUser[]): Promise<void>;
  send(body: Record<string, unknown>): Promise<{ status: number; json: Record<string, unknown> }>;
  ask(recipients: string[], extra?: Record<string, unknown>): Promise<string>;
  answerOf(requestId: string, email: string): Promise<string | null | undefined>;
  /** Clicks as Teams would, and lets the fake apply the answer; answers the invoke's answer. */
  click(
    message: FakeTeamsMessage,
    value: string,
    clicker?: FakeTeamsUser,
    invokeId?: string,
  ): Promise<InvokeAnswer>;
}

interface InvokeAnswer {
  statusCode: number;
  type: string;
  value: Record<string, unknown>;
}

let world: World | undefined;

beforeAll(() => {
  for (const name of Object.keys(process.env)) if (/^connections/i.test(name)) delete process.env[name];
});

afterEach(async () => {
  if (!world) return;
  for (const notifier of [world.notifier, ...world.others]) await notifier.stop();
  await Promise.all([world.connector.close(), world.authority.close()]);
  expect(world.connector.violations).toEqual([]);
  world = undefined;
});

interface StartOptions {
  retries?: number;
  requestTimeoutMs?: number;
  /** The notifier's retention of finished sends (ms). */
  retention?: number;
}

async function start({ retries = 2, requestTimeoutMs, retention }: StartOptions = {}): Promise<World> {
  const authority = await startLocalOpenIdAuthority({ tenantId: appTenantId });
  const connector = await startFakeBotConnector({
    appId,
    acceptToken: (token) => token === outbound,
    users: [bob, carol, dave, user01, mallory],
  });
  const logs: string[] = [];
  const keep = (message: string, fields?: LogFields) => {
    logs.push(`${message} ${JSON.stringify(fields ?? {})}`);
  };
  const logger: Logger = { debug: keep, info: keep, warn: keep, error: keep };
  const clock = manualClock(Date.parse('2026-03-01T09:00:00.000Z'));
  const storage = memoryStorage({ clock });
  const others: Notifier[] = [];
  /** A notifier with a Teams transport of its own on `storage`, and how to post activities to it. */
  const instance = () => {
    const transport = teamsTransport({
      appId,
      appTenantId,
      authority: authority.authority,
      tenants: fixedTeamsTenants({ acme: acmeTenant.toUpperCase() }),
      tokenProvider: { getAccessToken: async () => outbound },
      retry: { retries, minDelayMs: 1, maxDelayMs: 100 },
      ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }),
      logger,
    });
    const notifier = createNotifier({
      storage,
      transports: [transport],
      clock,
      logger,
      ...(retention === undefined ? {} : { retention }),
      rateLimits: {
        perKey: { burst: 1000, perSecond: 1000 },
        perOrganization: { burst: 1000, perSecond: 1000 },
      },
    });
    const [route] = transport.routes;
    if (!route) throw new Error('no route');
    const post: World['post'] = (activity, serviceUrl = connector.serviceUrl) =>
      route.handle(
        {
          method: 'POST',
          path: route.path,
          query: new URLSearchParams(),
          headers: {
            authorization: `Bearer ${authority.activityToken({ audience: appId, serviceUrl })}`,
            'content-type': 'application/json',
          },
          body: new TextEncoder().encode(JSON.stringify(activity)),
          clientAddress: '127.0.0.1',
        },
        {},
      );
    return { transport, notifier, post };
  };
  const { transport, notifier, post } = instance();
  await notifier.seed(testSeed);

  const send: World['send'] = async (body) => {
    const response = await notifier.handle({
      method: 'POST',
      url: '/api/notify',
      headers: { 'x-api-key': testKeys.alice, 'content-type': 'application/json' },
      body: [Buffer.from(JSON.stringify(body))],
      clientAddress: '127.0.0.1',
    });
    if (!response) throw new Error('no answer');
    return { status: response.status, json: JSON.parse(response.body) as Record<string, unknown> };
  };

  world = {
    authority,
    connector,
    transport,
    storage,
    notifier,
    others,
    another() {
      const other = instance();
      others.push(other.notifier);
      return other;
    },
    clock,
    logs,
    post,
    async install(...users) {
      for (const installing of users) {
        for (const activity of connector.installActivities(installing.id)) {
          expect((await post(activity)).status).toBe(200);
        }
      }
    },
    send,
    async ask(recipients, extra = {}) {
      const answer = await send({
        user_emails: recipients,
        message: 'Deploy *v2* to production?',
        response_request: { options, timeout_minutes: 60, ...extra },
      });
      expect(answer.status).toBe(200);
      return answer.json.request_id as string;
    },
    async answerOf(requestId, email) {
      const status = await notifier.status(await notifier.authenticate(testKeys.alice), requestId);
      return status.responses.find((response) => response.user_email === email)?.option_value;
    },
    async click(message, value, clicker, invokeId) {
      const response = await post(connector.clickActivity(message, value, clicker?.id, invokeId));
      expect(response.status).toBe(200);
      const answer = JSON.parse(response.body) as InvokeAnswer;
      connector.receiveInvokeAnswer(message, answer);
      return answer;
    },
  };
  return world;
}

const only = (w: World, teamsUser: FakeTeamsUser): FakeTeamsMessage => {
  const messages = w.connector.messagesOf(teamsUser.id);
  expect(messages).toHaveLength(1);
  return messages[0]!;
};

describe('Teams transport: linking users', () => {
  it('links a user when they install the app, and delivers proactively in their 1:1 conversation', async () => {
    const w = await start();
    await w.install(bob);
    const [member] = w.connector.callsTo('member');
    expect(member).toMatchObject({
      conversationId: w.connector.personalConversationOf(bob.id),
      userId: bob.id,
    });
    const answer = await w.send({ user_emails: ['bob@acme.test'], message: 'Deploy *v2* finished' });
    expect(answer.status).toBe(200);
    expect(w.connector.callsTo('create')).toEqual([]);
    const message = only(w, bob);
    expect(message.text).toBe('Deploy **v2** finished');
    expect(message.conversationId).toBe(w.connector.personalConversationOf(bob.id));
    expect(w.connector.callsTo('send').every((call) => call.authorized)).toBe(true);
  });

  it('finds users by their email case-insensitively, or by user principal name without one', async () => {
    const w = await start();
    await w.install(carol, dave);
    const answer = await w.send({ user_emails: ['carol@acme.test', 'Dave@Acme.test'], message: 'Hello' });
    expect(answer.status).toBe(200);
    expect(w.connector.messagesOf(carol.id)).toHaveLength(1);
    expect(w.connector.messagesOf(dave.id)).toHaveLength(1);
  });

  it('cannot link a user whose roster entry has no address, and names them in the 500', async () => {
    const w = await start();
    await w.install(user01);
    expect(w.logs.some((line) => line.startsWith('Teams user without an email'))).toBe(true);
    const answer = await w.send({ user_emails: ['user01@acme.test'], message: 'Hello' });
    expect(answer.status).toBe(500);
    expect(answer.json.details).toContain('user01@acme.test');
  });

  it('links who adds the app to a team and who joins it later, and creates their 1:1 conversation on the first message', async () => {
    const w = await start();
    const installation = w.connector.teamInstallActivity(bob.id, [carol.id]);
    expect((await w.post(installation)).status).toBe(200);
    // Carol joins the team later: Teams names her among the members added.
    const joined = {
      ...installation,
      id: 'f:joined',
      membersAdded: [{ id: carol.id, aadObjectId: carol.aadObjectId }],
    };
    expect((await w.post(joined)).status).toBe(200);
    expect(w.connector.personalConversationOf(bob.id)).toBeNull();
    const first = await w.send({ user_emails: ['bob@acme.test', 'carol@acme.test'], message: 'First' });
    expect(first.status).toBe(200);
    expect(w.connector.callsTo('create').map((call) => call.body)).toEqual([
      expect.objectContaining({ isGroup: false, members: [{ id: bob.id }], tenantId: acmeTenant }),
      expect.objectContaining({ isGroup: false, members: [{ id: carol.id }], tenantId: acmeTenant }),
    ]);
    await w.send({ user_emails: ['bob@acme.test'], message: 'Second' });
    expect(w.connector.callsTo('create')).toHaveLength(2);
    expect(w.connector.messagesOf(bob.id).map((message) => message.text)).toEqual(['First', 'Second']);
  });

  it('stops reaching a user who removes the app, and reaches them again once they reinstall it', async () => {
    const w = await start();
    await w.install(bob);
    expect((await w.post(w.connector.uninstallActivity(bob.id))).status).toBe(200);
    const refused = await w.send({ user_emails: ['bob@acme.test'], message: 'Hello' });
    expect(refused.status).toBe(500);
    expect(refused.json.details).toContain('bob@acme.test');
    expect(w.connector.callsTo('send')).toEqual([]);
    await w.install(bob);
    expect((await w.send({ user_emails: ['bob@acme.test'], message: 'Again' })).status).toBe(200);
  });
});

describe('Teams transport: tenants', () => {
  it('refuses an activity from a tenant no organization names with 403, and stores nothing', async () => {
    const w = await start();
    const [installation] = w.connector.installActivities(mallory.id);
    const response = await w.post(installation);
    expect(response.status).toBe(403);
    expect(JSON.parse(response.body)).toEqual({ status: 'error', details: 'This tenant is not served here' });
    expect(w.connector.callsTo('member')).toEqual([]);
    // Mallory's address is alice's: alice must not have become reachable through another tenant.
    expect((await w.send({ user_emails: ['alice@acme.test'], message: 'Hi' })).status).toBe(500);
  });

  it('refuses a click from another tenant on a message of this one', async () => {
    const w = await start();
    await w.install(bob);
    await w.ask(['bob@acme.test']);
    const invoke = w.connector.clickActivity(only(w, bob), 'approve');
    const forged = {
      ...invoke,
      channelData: { tenant: { id: otherTenant } },
      conversation: { ...(invoke.conversation as object), tenantId: otherTenant },
    };
    expect((await w.post(forged)).status).toBe(403);
    const disagreeing = { ...invoke, channelData: { tenant: { id: otherTenant } } };
    expect((await w.post(disagreeing)).status).toBe(403);
  });

  it('does not reach the users of an organization without a tenant', async () => {
    const w = await start();
    const answer = await w.send({ user_emails: ['bob@acme.test'], message: 'Hi' });
    expect(answer.status).toBe(500);
    const response = await w.notifier.handle({
      method: 'POST',
      url: '/api/notify',
      headers: { 'x-api-key': testKeys.gina, 'content-type': 'application/json' },
      body: [Buffer.from(JSON.stringify({ user_emails: ['gina@globex.test'], message: 'Hi' }))],
      clientAddress: '127.0.0.1',
    });
    expect(response?.status).toBe(500);
    expect(w.connector.calls).toEqual([]);
  });
});

describe('Teams transport: failures', () => {
  it('marks a user unreachable on 403 BotNotInConversationRoster, names them in the 500, and tries no more', async () => {
    const w = await start();
    await w.install(bob, carol);
    w.connector.block(bob.id);
    const answer = await w.send({ user_emails: ['bob@acme.test', 'carol@acme.test'], message: 'Hello' });
    expect(answer.status).toBe(500);
    expect(answer.json.details).toContain('bob@acme.test');
    expect(answer.json.details).not.toContain('carol@acme.test');
    expect(
      w.connector
        .callsTo('send')
        .map((call) => call.status)
        .sort(),
    ).toEqual([201, 403]);
    await w.send({ user_emails: ['bob@acme.test'], message: 'Again' });
    expect(w.connector.callsTo('send')).toHaveLength(2);
  });

  it.each([
    [429, 0],
    [412, undefined],
    [502, undefined],
    [504, undefined],
  ])('retries a send answered %s, then delivers', async (status, retryAfterSeconds) => {
    const w = await start();
    await w.install(bob);
    w.connector.inject(
      'send',
      { status, ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }) },
      2,
    );
    expect((await w.send({ user_emails: ['bob@acme.test'], message: 'Hello' })).status).toBe(200);
    expect(w.connector.callsTo('send').map((call) => call.status)).toEqual([status, status, 201]);
    expect(w.connector.messagesOf(bob.id)).toHaveLength(1);
  });

  it('gives up after its retries, and does not retry a 500', async () => {
    const w = await start({ retries: 1 });
    await w.install(bob, carol);
    w.connector.inject(
      'send',
      { status: 429, retryAfterSeconds: 0 },
      2,
      w.connector.personalConversationOf(bob.id)!,
    );
    w.connector.inject('send', { status: 500 }, 1, w.connector.personalConversationOf(carol.id)!);
    const answer = await w.send({ user_emails: ['bob@acme.test', 'carol@acme.test'], message: 'Hello' });
    expect(answer.status).toBe(500);
    expect(answer.json.details).toContain('bob@acme.test');
    expect(answer.json.details).toContain('carol@acme.test');
    expect(w.connector.callsTo('send')).toHaveLength(3);
  });

  it('does not wait out a Retry-After longer than its longest pause', async () => {
    const w = await start();
    await w.install(bob);
    w.connector.inject('send', { status: 429, retryAfterSeconds: 3600 });
    expect((await w.send({ user_emails: ['bob@acme.test'], message: 'Hello' })).status).toBe(500);
    expect(w.connector.callsTo('send')).toHaveLength(1);
  });

  it('gives up on a Bot Connector that does not answer in time, without retrying', async () => {
    const w = await start({ requestTimeoutMs: 200 });
    await w.install(bob);
    w.connector.setLatency(1000);
    const answer = await w.send({ user_emails: ['bob@acme.test'], message: 'Hello' });
    expect(answer.status).toBe(500);
    expect(answer.json.details).toContain('bob@acme.test');
    expect(w.connector.callsTo('send')).toHaveLength(1);
    expect(w.logs.some((line) => line.includes('took longer than 200 ms'))).toBe(true);
  });

  it('marks a user unreachable when an update is refused with 403', async () => {
    const w = await start();
    await w.install(bob, carol);
    await w.ask(['bob@acme.test', 'carol@acme.test']);
    w.connector.block(bob.id);
    await w.click(only(w, carol), 'approve', carol);
    w.clock.advance(60 * 60_000);
    await w.notifier.runDueWork();
    expect(w.logs.some((line) => line.startsWith('Teams user unreachable') && line.includes(bob.id))).toBe(
      true,
    );
    expect((await w.send({ user_emails: ['bob@acme.test'], message: 'Hello' })).status).toBe(500);
  });
});

describe('Teams transport: clicks', () => {
  it('answers a click with the answered card, which replaces the clicked card, and stores the answer', async () => {
    const w = await start();
    await w.install(bob, carol);
    const requestId = await w.ask(['bob@acme.test', 'carol@acme.test']);
    const answer = await w.click(only(w, bob), 'approve');
    expect(answer.statusCode).toBe(200);
    expect(answer.type).toBe('application/vnd.microsoft.card.adaptive');
    expect(answer.value.actions).toBeUndefined();
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBe('approve');
    expect(only(w, bob)).toMatchObject({
      buttons: [],
      footer: expect.stringContaining('You answered “Approve”'),
    });
    // The invoke's answer replaced the card: no update was sent for it.
    expect(w.connector.callsTo('update')).toEqual([]);
  });

  it('changes nothing on a double click: the first answer stays, and the card is answered again', async () => {
    const w = await start();
    await w.install(bob, carol);
    const requestId = await w.ask(['bob@acme.test', 'carol@acme.test']);
    const message = only(w, bob);
    await w.click(message, 'approve');
    const second = await w.click(message, 'reject');
    expect(second.statusCode).toBe(200);
    expect(JSON.stringify(second.value)).toContain('You answered “Approve”');
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBe('approve');
  });

  it("ignores Teams' repeat of an invoke it already took", async () => {
    const w = await start();
    await w.install(bob);
    const requestId = await w.ask(['bob@acme.test'], { disable: 'onTimeout' });
    const message = only(w, bob);
    await w.click(message, 'approve', bob, 'invoke-1');
    await w.click(message, 'reject', bob, 'invoke-2');
    const repeat = await w.click(message, 'approve', bob, 'invoke-1');
    expect(repeat.statusCode).toBe(200);
    expect(JSON.stringify(repeat.value)).toContain('Your answer: “Reject”');
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBe('reject');
  });

  it('refuses a click by someone other than the recipient, and changes nothing', async () => {
    const w = await start();
    await w.install(bob, carol);
    const requestId = await w.ask(['bob@acme.test', 'carol@acme.test']);
    const answer = await w.click(only(w, bob), 'approve', carol);
    expect(answer).toMatchObject({ statusCode: 403, type: 'application/vnd.microsoft.error' });
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBeNull();
    expect(await w.answerOf(requestId, 'carol@acme.test')).toBeNull();
    expect(only(w, bob).buttons).toEqual(options);
  });

  it('refuses a click by the recipient id with another Entra object id', async () => {
    const w = await start();
    await w.install(bob);
    const requestId = await w.ask(['bob@acme.test']);
    const invoke = w.connector.clickActivity(only(w, bob), 'approve');
    const forged = { ...invoke, from: { ...(invoke.from as object), aadObjectId: 'aad-someone-else' } };
    const answer = JSON.parse((await w.post(forged)).body) as InvokeAnswer;
    expect(answer.statusCode).toBe(403);
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBeNull();
  });

  it('refuses a button that names another request, an unknown message, a value that is no option, and other verbs', async () => {
    const w = await start();
    await w.install(bob);
    const requestId = await w.ask(['bob@acme.test']);
    const invoke = w.connector.clickActivity(only(w, bob), 'approve');
    const value = invoke.value as { action: { data: Record<string, string>; verb: string } };
    const withData = (data: Record<string, string>, verb = value.action.verb) => ({
      ...invoke,
      value: { ...value, action: { ...value.action, verb, data } },
    });
    const statusOf = async (activity: unknown) =>
      (JSON.parse((await w.post(activity)).body) as InvokeAnswer).statusCode;
    // A message is found among the copies of the request its button names: none of another.
    expect(await statusOf(withData({ requestId: 'req_000000000000000000000000', value: 'approve' }))).toBe(
      404,
    );
    expect(await statusOf({ ...invoke, replyToId: '1:unknown' })).toBe(404);
    expect(await statusOf(withData({ requestId, value: 'maybe' }))).toBe(400);
    expect(await statusOf(withData({ requestId, value: 'approve' }, 'something.else'))).toBe(400);
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBeNull();
  });

  it.each([
    ['delivered now', false],
    ['of an earlier release', true],
  ])(
    'refuses a click on a message %s whose button names another request of its recipient, and changes neither',
    async (_, legacy) => {
      const w = await start();
      await w.install(bob, carol);
      const other = await w.ask(['bob@acme.test', 'carol@acme.test']);
      const own = await w.ask(['bob@acme.test']);
      if (legacy) await asEarlierRelease(w, own);
      const [, message] = w.connector.messagesOf(bob.id);
      if (!message) throw new Error('no second message');
      const invoke = w.connector.clickActivity(message, 'approve');
      const value = invoke.value as { action: { data: Record<string, string> } };
      const forged = {
        ...invoke,
        value: { ...value, action: { ...value.action, data: { ...value.action.data, requestId: other } } },
      };
      const answer = JSON.parse((await w.post(forged)).body) as InvokeAnswer;
      expect(answer.statusCode).toBe(404);
      expect(await w.answerOf(own, 'bob@acme.test')).toBeNull();
      expect(await w.answerOf(other, 'bob@acme.test')).toBeNull();
    },
  );

  it("forgets a message once the notifier's retention has passed after its request finished", async () => {
    const day = 24 * 60 * 60_000;
    const w = await start({ retention: day });
    await w.install(bob, carol);
    await w.ask(['bob@acme.test', 'carol@acme.test']);
    const open = only(w, bob);
    w.clock.advance(60 * 60_000);
    await w.notifier.runDueWork();
    w.clock.advance(day - 60_000);
    expect((await w.click(open, 'approve')).statusCode).toBe(200);
    w.clock.advance(2 * 60_000);
    expect((await w.click(open, 'approve')).statusCode).toBe(404);
  });

  it('answers 501 to other invokes, and 200 to activities it has nothing to do with', async () => {
    const w = await start();
    await w.install(bob);
    const [installation] = w.connector.installActivities(bob.id);
    expect((await w.post({ ...installation, type: 'invoke', name: 'composeExtension/query' })).status).toBe(
      501,
    );
    expect((await w.post({ ...installation, type: 'message', text: 'hi' })).status).toBe(200);
  });

  it('throws when its view reached Teams after a newer one, and the newer view tried again is shown', async () => {
    const w = await start();
    await w.install(bob);
    const requestId = await w.ask(['bob@acme.test']);
    const [copy] = await w.storage.deliveries.listDeliveries(requestId);
    const request = await w.storage.requests.getRequest(requestId);
    if (!copy || !request) throw new Error('no copy delivered');
    const organization = { id: 'acme', name: 'Acme Inc' };
    const address = { installationId: acmeTenant, userRef: bob.id };
    const update = (version: number, status: 'pending' | 'finished') =>
      w.transport.update(
        {
          organization,
          recipient: 'bob@acme.test',
          address,
          message: requestView({ ...request, version, status, finishedAt: 0 }, 'bob@acme.test'),
        },
        copy.ref,
      );
    const release = w.connector.hold('update');
    const late = update(request.version + 1, 'pending');
    await vi.waitFor(() => expect(w.connector.callsTo('update')).toHaveLength(1));
    await update(request.version + 2, 'finished');
    expect(only(w, bob).buttons).toEqual([]);
    release();
    await expect(late).rejects.toThrow(/a newer view was claimed/);
    // The older view landed last: Teams shows it until the core's refresh sends the current view.
    expect(only(w, bob).buttons).toHaveLength(2);
    await update(request.version + 2, 'finished');
    expect(only(w, bob)).toMatchObject({ buttons: [], footer: expect.stringMatching(/expired/), updates: 3 });
  });

  it('updates every other copy with updateActivity at expiry', async () => {
    const w = await start();
    await w.install(bob, carol);
    await w.ask(['bob@acme.test', 'carol@acme.test']);
    await w.click(only(w, bob), 'approve');
    w.clock.advance(60 * 60_000);
    await w.notifier.runDueWork();
    expect(only(w, carol)).toMatchObject({ buttons: [], footer: expect.stringMatching(/expired/) });
    expect(only(w, bob)).toMatchObject({
      buttons: [],
      footer: expect.stringContaining('Closed. Your answer: “Approve”'),
    });
    expect(
      w.connector
        .callsTo('update')
        .map((call) => call.conversationId)
        .sort(),
    ).toEqual(
      [w.connector.personalConversationOf(bob.id), w.connector.personalConversationOf(carol.id)].sort(),
    );
  });
});

/** The copy of a request to Bob, as the core recorded it. */
const bobsCopy = async (w: World, requestId: string) => {
  const copy = (await w.storage.deliveries.listDeliveries(requestId)).find(
    (each) => each.recipient === 'bob@acme.test',
  );
  const { conversationId, activityId } = copy?.ref ?? {};
  if (!copy || conversationId === undefined || activityId === undefined) throw new Error('no copy to Bob');
  return { copy, conversationId, activityId };
};

/** The key of the transport's record of a message: an earlier release's `copy`, or the newest version `shown`. */
const keyOf = (kind: 'copy' | 'shown', conversationId: string, activityId: string) =>
  `teams:${kind}:${JSON.stringify([conversationId, activityId])}`;

/**
 * Makes Bob's copy of a request what an earlier release left: the message alone in the ref, the rest
 * in a record of its own (with the card it answered clicks with). Answers the record's key.
 */
async function asEarlierRelease(w: World, requestId: string): Promise<string> {
  const { copy, conversationId, activityId } = await bobsCopy(w, requestId);
  const request = await w.storage.requests.getRequest(requestId);
  if (!request) throw new Error('no request');
  await w.storage.deliveries.addDelivery({ ...copy, ref: { conversationId, activityId } });
  const key = keyOf('copy', conversationId, activityId);
  await w.storage.transportState.set(
    key,
    JSON.stringify({
      organizationId: 'acme',
      tenantId: acmeTenant,
      sendId: requestId,
      recipient: 'bob@acme.test',
      userId: bob.id,
      aadObjectId: bob.aadObjectId,
      serviceUrl: w.connector.serviceUrl,
      agent: { id: w.connector.botId },
      conversationId,
      activityId,
      lastVersion: request.version,
      card: adaptiveCard(requestView(request, 'bob@acme.test')),
    }),
  );
  return key;
}

describe('Teams transport: what it keeps of delivered messages', () => {
  it('keeps no record of an interactive message it delivers: its ref names the view and who may click', async () => {
    const w = await start();
    await w.install(bob);
    const requestId = await w.ask(['bob@acme.test']);
    const { copy, conversationId, activityId } = await bobsCopy(w, requestId);
    const request = await w.storage.requests.getRequest(requestId);
    expect(copy.ref).toEqual({
      conversationId: w.connector.personalConversationOf(bob.id),
      activityId: expect.any(String),
      v: String(request?.version),
      t: acmeTenant,
      u: bob.id,
    });
    expect(await w.storage.transportState.get(keyOf('copy', conversationId, activityId))).toBeNull();
    expect(await w.storage.transportState.get(keyOf('shown', conversationId, activityId))).toBeNull();
  });

  it('keeps the version of the newest card once the message changed, until the retention has passed after its last write, plus a day', async () => {
    const day = 24 * 60 * 60_000;
    const w = await start({ retention: day });
    await w.install(bob, carol);
    const requestId = await w.ask(['bob@acme.test', 'carol@acme.test']);
    await w.click(only(w, bob), 'approve');
    const { conversationId, activityId } = await bobsCopy(w, requestId);
    const shown = () => w.storage.transportState.get(keyOf('shown', conversationId, activityId));
    expect((await shown())?.value).toBe(String((await w.storage.requests.getRequest(requestId))?.version));
    // The timeout finishes the request: its card is the last change of the message.
    w.clock.advance(60 * 60_000);
    await w.notifier.runDueWork();
    expect((await shown())?.value).toBe(String((await w.storage.requests.getRequest(requestId))?.version));
    w.clock.advance(2 * day - 60_000);
    expect(await shown()).not.toBeNull();
    w.clock.advance(2 * 60_000);
    expect(await shown()).toBeNull();
  });

  it('answers and applies a click on a message of an earlier release by the record that release kept, and updates it by that record', async () => {
    const w = await start();
    await w.install(bob, carol);
    const requestId = await w.ask(['bob@acme.test', 'carol@acme.test']);
    const { activityId } = await bobsCopy(w, requestId);
    const key = await asEarlierRelease(w, requestId);

    expect((await w.click(only(w, bob), 'approve', carol)).statusCode).toBe(403);
    const answer = await w.click(only(w, bob), 'approve');
    expect(answer.statusCode).toBe(200);
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBe('approve');
    const kept = JSON.parse((await w.storage.transportState.get(key))?.value ?? '{}') as {
      lastVersion: number;
      card: unknown;
    };
    expect(kept.lastVersion).toBe((await w.storage.requests.getRequest(requestId))?.version);
    // Instances of the earlier release answer clicks with the card in the record: it is kept current.
    expect(kept.card).toEqual(answer.value);

    w.clock.advance(60 * 60_000);
    await w.notifier.runDueWork();
    expect(only(w, bob)).toMatchObject({ buttons: [], footer: expect.stringContaining('Closed') });
    expect(w.connector.callsTo('update').map((call) => call.activityId)).toContain(activityId);
  });

  it("updates a message through its recipient's current service URL", async () => {
    const w = await start();
    await w.install(bob);
    const requestId = await w.ask(['bob@acme.test']);
    // Teams moved the tenant: the next activity of Bob (his install, again) names another region.
    const moved = w.connector.serviceUrl.replace('/amer/', '/emea/');
    for (const activity of w.connector.installActivities(bob.id)) {
      expect((await w.post({ ...activity, serviceUrl: moved }, moved)).status).toBe(200);
    }
    w.clock.advance(60 * 60_000);
    await w.notifier.runDueWork();
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBeNull();
    expect(w.connector.callsTo('update').map((call) => call.region)).toEqual(['emea']);
    expect(only(w, bob)).toMatchObject({ buttons: [], footer: expect.stringMatching(/expired/) });
  });

  it('answers and applies a click on another instance than the one that delivered, whose expiry updates every copy', async () => {
    const w = await start();
    await w.install(bob, carol);
    const requestId = await w.ask(['bob@acme.test', 'carol@acme.test']);
    const other = w.another();
    const response = await other.post(w.connector.clickActivity(only(w, bob), 'approve'));
    const answer = JSON.parse(response.body) as InvokeAnswer;
    expect(answer.statusCode).toBe(200);
    w.connector.receiveInvokeAnswer(only(w, bob), answer);
    expect(only(w, bob)).toMatchObject({
      buttons: [],
      footer: expect.stringContaining('You answered “Approve”'),
    });
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBe('approve');
    // Refused there as here: the ref says whose the message is.
    const refused = await other.post(w.connector.clickActivity(only(w, carol), 'approve', bob.id));
    expect((JSON.parse(refused.body) as InvokeAnswer).statusCode).toBe(403);
    w.clock.advance(60 * 60_000);
    await other.notifier.runDueWork();
    expect(only(w, carol)).toMatchObject({ buttons: [], footer: expect.stringMatching(/expired/) });
    expect(only(w, bob)).toMatchObject({ footer: expect.stringContaining('Closed. Your answer: “Approve”') });
  });
});

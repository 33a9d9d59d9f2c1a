/**
 * The world of the Teams transport's tests: a notifier (or several on one storage) with the Teams
 * transport, the fakes it talks to, and what a test does as Teams' users would.
 */
import { afterEach, expect } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
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
} from './fake-bot-connector.js';
import { type LocalOpenIdAuthority, startLocalOpenIdAuthority } from './local-openid-authority.js';
import { type ManualClock, manualClock } from './manual-clock.js';
import { testKeys, testSeed } from './test-seed.js';

const appId = '00000000-0000-4000-8000-0000000a0002';
const appTenantId = '11111111-1111-4111-8111-111111111111';
export const acmeTenant = '33333333-3333-4333-8333-333333333333';
export const otherTenant = '44444444-4444-4444-8444-444444444444';
const outbound = 'outbound-token';
/** The options of every request a world's `ask` sends. */
export const options = [
  { text: 'Approve', value: 'approve' },
  { text: 'Reject', value: 'reject' },
];

/** A Teams user of the acme tenant named `name`, with `overrides`. */
export const user = (name: string, overrides: Partial<FakeTeamsUser> = {}): FakeTeamsUser => ({
  id: `29:${name}`,
  aadObjectId: `aad-${name}`,
  name,
  email: `${name}@acme.test`,
  tenantId: acmeTenant,
  ...overrides,
});

export const bob = user('bob');
export const carol = user('carol', { email: 'Carol@Acme.test' });
export const dave = user('dave', { email: null, userPrincipalName: 'dave@acme.test' });
export const user01 = user('user01', { email: null, userPrincipalName: null });
export const mallory = user('mallory', { email: 'alice@acme.test', tenantId: otherTenant });

export interface World {
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

export interface InvokeAnswer {
  statusCode: number;
  type: string;
  value: Record<string, unknown>;
}

export interface StartOptions {
  retries?: number;
  requestTimeoutMs?: number;
  /** The notifier's retention of finished sends (ms). */
  retention?: number;
  /**
   * Runs once the core applied each click, before the transport learns its outcome: what lands while
   * a click is being answered.
   */
  afterClick?: () => Promise<void>;
  /** Runs once the core answered each `ChatSink.view`, before the transport gets it. */
  afterView?: () => Promise<void>;
  /** Whether the local inbox delivers too, beside Teams. */
  inbox?: boolean;
  /** How the notifiers see the storage: a test that slows a port down wraps it here. */
  wrapStorage?: (storage: StoragePorts) => StoragePorts;
  /** Runs before each check that an activity's tenant is served: what a slow tenant store costs. */
  beforeTenantCheck?: () => Promise<void>;
}

/**
 * A notifier with the Teams transport, on memory storage and a manual clock, against a fake Bot
 * Connector (standing in for Microsoft's) and a local OpenID authority (standing in for Entra and
 * Bot Framework's token issuer). Stop it with {@link stopTeamsWorld}.
 */
async function startTeamsWorld({
  retries = 2,
  requestTimeoutMs,
  retention,
  afterClick,
  afterView,
  inbox = false,
  wrapStorage = (storage) => storage,
  beforeTenantCheck,
}: StartOptions = {}): Promise<World> {
  // The Agents SDK reads connection settings from the environment when there are any.
  for (const name of Object.keys(process.env)) if (/^connections/i.test(name)) delete process.env[name];
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
    const tenants = fixedTeamsTenants({ acme: acmeTenant.toUpperCase() });
    const transport = teamsTransport({
      appId,
      appTenantId,
      authority: authority.authority,
      tenants: {
        tenantOf: tenants.tenantOf,
        async serves(tenantId) {
          await beforeTenantCheck?.();
          return tenants.serves(tenantId);
        },
      },
      tokenProvider: { getAccessToken: async () => outbound },
      retry: { retries, minDelayMs: 1, maxDelayMs: 100 },
      ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }),
      logger,
    });
    const connect = transport.connect;
    transport.connect = (sink) =>
      connect({
        ...sink,
        async click(click, clickOptions) {
          const outcome = await sink.click(click, clickOptions);
          await afterClick?.();
          return outcome;
        },
        async view(sendId, recipient) {
          const view = await sink.view(sendId, recipient);
          await afterView?.();
          return view;
        },
      });
    const notifier = createNotifier({
      storage: wrapStorage(storage),
      transports: inbox ? [transport, inboxTransport({ clock })] : [transport],
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

  return {
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
}

export const only = (w: World, teamsUser: FakeTeamsUser): FakeTeamsMessage => {
  const messages = w.connector.messagesOf(teamsUser.id);
  expect(messages).toHaveLength(1);
  return messages[0]!;
};

/** Stops every instance of `world` and its fakes, and checks that the fake Bot Connector saw no violation. */
async function stopTeamsWorld(world: World): Promise<void> {
  for (const notifier of [world.notifier, ...world.others]) await notifier.stop();
  await Promise.all([world.connector.close(), world.authority.close()]);
  expect(world.connector.violations).toEqual([]);
}

/** The copy of a request to Bob, as the core recorded it. */
export const bobsCopy = async (w: World, requestId: string) => {
  const copy = (await w.storage.deliveries.listDeliveries(requestId)).find(
    (each) => each.recipient === 'bob@acme.test',
  );
  const { conversationId, activityId } = copy?.ref ?? {};
  if (!copy || conversationId === undefined || activityId === undefined) throw new Error('no copy to Bob');
  return { copy, conversationId, activityId };
};

/** The key of the transport's record of a message: an earlier release's `copy`, or the newest version `shown`. */
export const keyOf = (kind: 'copy' | 'shown', conversationId: string, activityId: string) =>
  `teams:${kind}:${JSON.stringify([conversationId, activityId])}`;

/**
 * Makes Bob's copy of a request what an earlier release left: the message alone in the ref, the rest
 * in a record of its own (with the card it answered clicks with, and the service URL it was sent
 * through, the fake's own by default). Answers the record's key.
 */
export async function asEarlierRelease(
  w: World,
  requestId: string,
  serviceUrl = w.connector.serviceUrl,
): Promise<string> {
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
      serviceUrl,
      agent: { id: w.connector.botId },
      conversationId,
      activityId,
      lastVersion: request.version,
      card: adaptiveCard(requestView(request, 'bob@acme.test')),
    }),
  );
  return key;
}

/**
 * How the tests of a file start a world: each test's is stopped after it (registered here, so call
 * this at the top of the file).
 */
export function teamsWorlds(): (options?: StartOptions) => Promise<World> {
  let world: World | undefined;
  afterEach(async () => {
    if (world) await stopTeamsWorld(world);
    world = undefined;
  });
  return async (options) => {
    world = await startTeamsWorld(options);
    return world;
  };
}

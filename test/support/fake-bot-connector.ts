/**
 * A local stand-in for Microsoft's Bot Connector service as Teams runs it, which cannot be reached
 * from here (no internet): the REST calls the Teams transport makes through the Agents SDK, served
 * on 127.0.0.1 under a regional path the way Teams serves them (`<serviceUrl>v3/conversations…`),
 * so that the SDK's real `CloudAdapter` and `ConnectorClient` run against it unchanged:
 *
 * - `POST v3/conversations` (create a 1:1 conversation), `POST v3/conversations/{id}/activities`
 *   (send), `PUT v3/conversations/{id}/activities/{activityId}` (update), and
 *   `GET v3/conversations/{id}/members/{userId}` (one roster entry, with email and UPN).
 *
 * Every call is recorded and checked: the bearer token must be one the test accepts, ids in paths
 * must be URL-encoded, and every card must parse with the official `adaptivecards` package at schema
 * 1.5 without a warning or a property it does not know (a violation is answered `400` and kept in
 * `violations`). A user who removed or blocked the app is answered `403 BotNotInConversationRoster`,
 * and faults can be injected per operation: `429` with `Retry-After`, `412`, `502`, `504`, …;
 * and a call can be held, once recorded, until the test releases it.
 *
 * It also plays Teams' side of the bot's endpoint: it builds the activities Teams would POST to
 * `/teams/messages` when a user installs the app or clicks a button of a message it holds.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type * as AdaptiveCards from 'adaptivecards';

const require = createRequire(import.meta.url);
/** `require('adaptivecards')` fails on Node 20 (it wants a DOM); its browser bundle parses cards fine. */
const adaptiveCards = require('adaptivecards/dist/adaptivecards.js') as typeof AdaptiveCards;

type Json = Record<string, unknown>;

const asRecord = (value: unknown): Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** `value` with the keys of every object sorted, to compare JSON regardless of key order. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, canonical((value as Json)[key])]),
  );
}

/**
 * What the official `adaptivecards` parser (3.0.6) finds wrong with a card at schema 1.5: its parse
 * warnings (unknown element or action types, properties of a later version), and any property it
 * drops when serializing the card back (a property the schema does not have). Empty when the card
 * is a valid 1.5 card.
 */
export function adaptiveCardProblems(json: unknown): string[] {
  const context = new adaptiveCards.SerializationContext(adaptiveCards.Versions.v1_5);
  const card = new adaptiveCards.AdaptiveCard();
  card.parse(json, context);
  const problems: string[] = [];
  for (let index = 0; index < context.eventCount; index += 1)
    problems.push(context.getEventAt(index).message);
  if (asRecord(json).version !== '1.5') problems.push('version: not 1.5');
  const serialized = JSON.stringify(canonical(card.toJSON()));
  if (serialized !== JSON.stringify(canonical(json))) {
    problems.push(`the parser does not read the card as written: ${serialized}`);
  }
  return problems;
}

/** A Teams user of the fake tenant. */
export interface FakeTeamsUser {
  /** `29:…`. */
  id: string;
  aadObjectId: string;
  name: string;
  /** Null for a roster entry without an email (a guest, say). */
  email: string | null;
  userPrincipalName?: string | null;
  tenantId: string;
}

/** A recorded call. */
export interface FakeConnectorCall {
  /** The regional path the call came to (`amer` in every activity's `serviceUrl`). */
  region: string;
  operation: 'create' | 'send' | 'update' | 'member' | 'unknown';
  method: string;
  /** Decoded ids from the path. */
  conversationId: string | null;
  activityId: string | null;
  userId: string | null;
  /** Whether the bearer token was accepted. */
  authorized: boolean;
  body: unknown;
  /** The status answered. */
  status: number;
  /** When the call came (`performance.now()`). */
  at: number;
}

/** A message as its recipient sees it now. */
export interface FakeTeamsMessage {
  conversationId: string;
  activityId: string;
  userId: string;
  activity: Json;
  card: Json;
  /** The body's text blocks but the footer, markdown escapes removed, one line each (a line's runs joined). */
  text: string;
  /** The card's `Action.Execute` buttons. */
  buttons: { text: string; value: string }[];
  /** The last text block when it is subtle (the footer), or null. */
  footer: string | null;
  /** How many times an update changed it. */
  updates: number;
}

/** A fault met by the next calls of an operation. */
export interface FakeConnectorFault {
  status: number;
  /** The error code in the body (`BotNotInConversationRoster`, …). */
  code?: string;
  retryAfterSeconds?: number;
}

/** Settings of {@link startFakeBotConnector}. */
export interface FakeBotConnectorOptions {
  /** The bot's app id: its account is `28:<appId>`. */
  appId: string;
  /** Whether a bearer token is one the Bot Connector would accept. */
  acceptToken(token: string): boolean;
  users?: FakeTeamsUser[];
}

/** The fake Bot Connector, running. */
export interface FakeBotConnector {
  /** `http://127.0.0.1:<port>/amer/`: the `serviceUrl` of every activity it builds. */
  serviceUrl: string;
  /** The bot's account id, `28:<appId>`. */
  botId: string;
  calls: FakeConnectorCall[];
  violations: string[];
  callsTo(operation: FakeConnectorCall['operation']): FakeConnectorCall[];
  addUser(user: FakeTeamsUser): void;
  /** The user removes or blocks the app: calls for them are answered `403 BotNotInConversationRoster`. */
  block(userId: string): void;
  /** The next `times` calls of `operation` (in `conversationId` only, when given) meet `fault`. */
  inject(
    operation: FakeConnectorCall['operation'],
    fault: FakeConnectorFault,
    times?: number,
    conversationId?: string,
  ): void;
  /** Every answer waits this long (ms) before it is sent. */
  setLatency(ms: number): void;
  /**
   * The next call of `operation` waits, once received, until the function answered is called, then
   * is served as usual: how two calls are made to land in the order a test wants.
   */
  hold(operation: FakeConnectorCall['operation']): () => void;
  /** The 1:1 conversation of a user with the bot, or null before there is one. */
  personalConversationOf(userId: string): string | null;
  /** What Teams sends when a user installs the app for themselves: `installationUpdate`, then `conversationUpdate`. */
  installActivities(userId: string): Json[];
  /** What Teams sends when a user removes the app from their personal scope. */
  uninstallActivity(userId: string): Json;
  /** What Teams sends when `installerId` adds the app to a team whose members are `memberIds`. */
  teamInstallActivity(installerId: string, memberIds: string[]): Json;
  /**
   * The invoke Teams sends when `clickerId` clicks the button with `value` of `message` (each call
   * a new invoke id unless `invokeId` is given; sending one activity twice is how Teams retries).
   */
  clickActivity(message: FakeTeamsMessage, value: string, clickerId?: string, invokeId?: string): Json;
  /**
   * What Teams does with the bot's answer to a click on `message`: a card answer (checked like any
   * card) replaces the message's card, as the clicker then sees it; an error answer changes nothing.
   * Answers the `statusCode` of the answer.
   */
  receiveInvokeAnswer(message: FakeTeamsMessage, answer: unknown): number;
  /** The messages in the 1:1 conversation of a user, oldest first. */
  messagesOf(userId: string): FakeTeamsMessage[];
  close(): Promise<void>;
}

interface Conversation {
  id: string;
  kind: 'personal' | 'team';
  tenantId: string;
  members: Set<string>;
  messages: Map<string, { activity: Json; updates: number }>;
}

/** Markdown escapes removed and no-break spaces made plain: the text as a reader sees it. */
const asRead = (text: string): string =>
  text.replace(/\\([\\`*_~[\]<>#+=\-.)&!])/g, '$1').replaceAll('\u00a0', ' ');

function textBlocks(elements: unknown): Json[] {
  return asArray(elements).flatMap((raw) => {
    const element = asRecord(raw);
    if (element.type === 'TextBlock' || element.type === 'RichTextBlock') return [element];
    if (element.type === 'Container') return textBlocks(element.items);
    return [];
  });
}

function cardOf(activity: Json): Json {
  return asRecord(asRecord(asArray(activity.attachments)[0]).content);
}

function viewOf(conversation: Conversation, activityId: string, stored: { activity: Json; updates: number }) {
  const card = cardOf(stored.activity);
  const blocks = textBlocks(card.body);
  const last = blocks[blocks.length - 1];
  const footerBlock = last?.isSubtle === true ? last : undefined;
  // A RichTextBlock's runs are shown as they are: no markdown, no escapes.
  const textOf = (block: Json) =>
    block.type === 'RichTextBlock'
      ? asArray(block.inlines)
          .map((run) => String(asRecord(run).text ?? ''))
          .join('')
          .replaceAll('\u00a0', ' ')
      : asRead(String(block.text ?? ''));
  return {
    conversationId: conversation.id,
    activityId,
    userId: [...conversation.members][0] ?? '',
    activity: stored.activity,
    card,
    text: blocks
      .filter((block) => block !== footerBlock)
      .map(textOf)
      .join('\n'),
    buttons: asArray(card.actions)
      .map(asRecord)
      .filter((action) => action.type === 'Action.Execute')
      .map((action) => ({ text: String(action.title), value: String(asRecord(action.data).value) })),
    footer: footerBlock ? textOf(footerBlock) : null,
    updates: stored.updates,
  };
}

/** Starts a fake Bot Connector on an ephemeral port of 127.0.0.1. */
export async function startFakeBotConnector(options: FakeBotConnectorOptions): Promise<FakeBotConnector> {
  const botId = `28:${options.appId}`;
  const users = new Map<string, FakeTeamsUser>();
  const blocked = new Set<string>();
  const conversations = new Map<string, Conversation>();
  const faults: { operation: string; fault: FakeConnectorFault; conversationId: string | undefined }[] = [];
  const holds: { operation: string; until: Promise<void> }[] = [];
  const calls: FakeConnectorCall[] = [];
  const violations: string[] = [];
  let counter = 0;
  let latencyMs = 0;
  let serviceUrl = '';
  for (const user of options.users ?? []) users.set(user.id, user);

  const nextId = (prefix: string) => {
    counter += 1;
    return `${prefix}${counter}-${randomBytes(3).toString('hex')}`;
  };

  const userOf = (userId: string): FakeTeamsUser => {
    const user = users.get(userId);
    if (!user) throw new Error(`fake Bot Connector: no user ${userId}`);
    return user;
  };

  const personalConversation = (user: FakeTeamsUser): Conversation => {
    const existing = [...conversations.values()].find(
      (conversation) => conversation.kind === 'personal' && conversation.members.has(user.id),
    );
    if (existing) return existing;
    // Teams' 1:1 ids look like `a:1Kx…`; a `;` and an `@` check that the transport encodes ids in paths.
    const conversation: Conversation = {
      id: `a:${nextId('personal;')}@${user.tenantId}`,
      kind: 'personal',
      tenantId: user.tenantId,
      members: new Set([user.id]),
      messages: new Map(),
    };
    conversations.set(conversation.id, conversation);
    return conversation;
  };

  const activityBase = (user: FakeTeamsUser, conversation: Conversation): Json => ({
    id: nextId('f:'),
    channelId: 'msteams',
    serviceUrl,
    timestamp: new Date().toISOString(),
    from: { id: user.id, name: user.name, aadObjectId: user.aadObjectId },
    recipient: { id: botId, name: 'Notifier' },
    conversation: {
      id: conversation.id,
      conversationType: conversation.kind === 'personal' ? 'personal' : 'channel',
      tenantId: user.tenantId,
    },
    channelData: { tenant: { id: user.tenantId } },
  });

  const rosterEntry = (user: FakeTeamsUser): Json => ({
    id: user.id,
    name: user.name,
    aadObjectId: user.aadObjectId,
    ...(user.email === null ? {} : { email: user.email }),
    ...(user.userPrincipalName === null ? {} : { userPrincipalName: user.userPrincipalName ?? user.email }),
    tenantId: user.tenantId,
    userRole: 'user',
  });

  /**
   * Splits `/<region>/v3/conversations/{id}/…` into the region, the operation and its decoded ids.
   * Every region serves the same conversations, as Teams' regional service URLs do.
   */
  const route = (method: string, rawPath: string) => {
    const region = /^\/([a-z]+)\//.exec(rawPath)?.[1] ?? '';
    const prefix = `/${region}/v3/conversations`;
    const segments = rawPath.startsWith(prefix)
      ? rawPath.slice(prefix.length).split('/').filter(Boolean)
      : [];
    const [conversationId = null, kind = null, id = null] = segments.map((segment) =>
      decodeURIComponent(segment),
    );
    const operation: FakeConnectorCall['operation'] = !rawPath.startsWith(prefix)
      ? 'unknown'
      : method === 'POST' && segments.length === 0
        ? 'create'
        : method === 'POST' && kind === 'activities'
          ? 'send'
          : method === 'PUT' && kind === 'activities' && id !== null
            ? 'update'
            : method === 'GET' && kind === 'members' && id !== null
              ? 'member'
              : 'unknown';
    return {
      region,
      operation,
      conversationId,
      id,
      encodedWell: segments.every((segment) => !/[:;@]/.test(segment)),
    };
  };

  const error = (code: string, message: string): Json => ({ error: { code, message } });

  const checkCard = (activity: Json, what: string): string[] => {
    const attachment = asRecord(asArray(activity.attachments)[0]);
    if (activity.type !== 'message') return [`${what}: activity type ${String(activity.type)}`];
    if (attachment.contentType !== 'application/vnd.microsoft.card.adaptive') {
      return [`${what}: not an Adaptive Card attachment`];
    }
    return adaptiveCardProblems(attachment.content).map((problem) => `${what}: ${problem}`);
  };

  const serve = (
    operation: FakeConnectorCall['operation'],
    conversationId: string | null,
    id: string | null,
    body: Json,
  ): { status: number; body: Json } => {
    switch (operation) {
      case 'create': {
        const member = asRecord(asArray(body.members)[0]);
        const user = users.get(String(member.id));
        const tenantId = asRecord(asRecord(body.channelData).tenant).id ?? body.tenantId;
        if (!user) return { status: 404, body: error('MemberNotFound', 'No such user') };
        if (body.isGroup !== false || tenantId !== user.tenantId) {
          violations.push(
            `create: expected a 1:1 conversation in the user's tenant, got ${JSON.stringify(body)}`,
          );
          return { status: 400, body: error('BadArgument', 'Invalid conversation parameters') };
        }
        if (blocked.has(user.id))
          return { status: 403, body: error('BotNotInConversationRoster', 'Blocked') };
        return { status: 201, body: { id: personalConversation(user).id } };
      }
      case 'send':
      case 'update': {
        const conversation = conversations.get(conversationId ?? '');
        if (!conversation)
          return { status: 404, body: error('ConversationNotFound', 'No such conversation') };
        if ([...conversation.members].some((member) => blocked.has(member))) {
          return {
            status: 403,
            body: error('BotNotInConversationRoster', 'The bot is not part of the conversation roster.'),
          };
        }
        const problems = checkCard(body, operation);
        if (problems.length > 0) {
          violations.push(...problems);
          return { status: 400, body: error('BadArgument', problems.join('; ')) };
        }
        if (operation === 'send') {
          const activityId = nextId('1:');
          conversation.messages.set(activityId, { activity: body, updates: 0 });
          return { status: 201, body: { id: activityId } };
        }
        const stored = conversation.messages.get(id ?? '');
        if (!stored) return { status: 404, body: error('ActivityNotFound', 'No such activity') };
        if (body.id !== id) violations.push(`update: body id ${String(body.id)} is not the activity ${id}`);
        stored.activity = body;
        stored.updates += 1;
        return { status: 200, body: { id } };
      }
      case 'member': {
        const conversation = conversations.get(conversationId ?? '');
        const user = users.get(id ?? '');
        if (!conversation || !user || !conversation.members.has(user.id)) {
          return { status: 404, body: error('MemberNotFoundInConversation', 'No such member') };
        }
        return { status: 200, body: rosterEntry(user) };
      }
      default:
        return { status: 404, body: error('NotFound', 'Unknown operation') };
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const method = req.method ?? 'GET';
    const rawPath = (req.url ?? '').split('?')[0] ?? '';
    const where = route(method, rawPath);
    const text = Buffer.concat(chunks).toString('utf8');
    const body = text === '' ? {} : asRecord(JSON.parse(text));
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    const authorized = token !== undefined && options.acceptToken(token);
    const { conversationId, id } = where;
    const call: FakeConnectorCall = {
      region: where.region,
      operation: where.operation,
      method,
      conversationId,
      activityId: where.operation === 'update' ? id : null,
      userId: where.operation === 'member' ? id : null,
      authorized,
      body,
      status: 0,
      at: performance.now(),
    };
    calls.push(call);
    if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
    const held = holds.findIndex((planned) => planned.operation === where.operation);
    if (held >= 0) await holds.splice(held, 1)[0]?.until;
    const reply = (status: number, answer: Json, headers: Record<string, string> = {}) => {
      call.status = status;
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
      res.end(JSON.stringify(answer));
    };
    if (!authorized) {
      violations.push(`${where.operation}: called without an accepted bearer token`);
      reply(401, error('Unauthorized', 'Authorization has been denied for this request.'));
      return;
    }
    if (!where.encodedWell) violations.push(`${where.operation}: ids not URL-encoded in ${rawPath}`);
    const index = faults.findIndex(
      (planned) =>
        planned.operation === where.operation &&
        (planned.conversationId === undefined || planned.conversationId === conversationId),
    );
    const fault = index < 0 ? undefined : faults.splice(index, 1)[0]?.fault;
    if (fault) {
      reply(
        fault.status,
        error(fault.code ?? `Status${fault.status}`, 'Injected fault'),
        fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) },
      );
      return;
    }
    const answer = serve(where.operation, conversationId, id, body);
    reply(answer.status, answer.body);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((failure: unknown) => {
      violations.push(`fake Bot Connector failed: ${String(failure)}`);
      res.writeHead(500).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  serviceUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/amer/`;

  return {
    serviceUrl,
    botId,
    calls,
    violations,
    callsTo: (operation) => calls.filter((call) => call.operation === operation),
    addUser(user) {
      users.set(user.id, user);
    },
    block(userId) {
      blocked.add(userId);
    },
    inject(operation, fault, times = 1, conversationId = undefined) {
      for (let i = 0; i < times; i += 1) faults.push({ operation, fault, conversationId });
    },
    setLatency(ms) {
      latencyMs = ms;
    },
    hold(operation) {
      let release = () => {};
      holds.push({
        operation,
        until: new Promise((resolve) => {
          release = resolve;
        }),
      });
      return release;
    },
    personalConversationOf(userId) {
      const conversation = [...conversations.values()].find(
        (candidate) => candidate.kind === 'personal' && candidate.members.has(userId),
      );
      return conversation?.id ?? null;
    },
    installActivities(userId) {
      const user = userOf(userId);
      blocked.delete(userId);
      const conversation = personalConversation(user);
      return [
        { ...activityBase(user, conversation), type: 'installationUpdate', action: 'add' },
        { ...activityBase(user, conversation), type: 'conversationUpdate', membersAdded: [{ id: botId }] },
      ];
    },
    uninstallActivity(userId) {
      const user = userOf(userId);
      blocked.add(userId);
      return {
        ...activityBase(user, personalConversation(user)),
        type: 'installationUpdate',
        action: 'remove',
      };
    },
    teamInstallActivity(installerId, memberIds) {
      const installer = userOf(installerId);
      const team: Conversation = {
        id: `19:${nextId('team')}@thread.tacv2`,
        kind: 'team',
        tenantId: installer.tenantId,
        members: new Set([installerId, ...memberIds]),
        messages: new Map(),
      };
      conversations.set(team.id, team);
      return {
        ...activityBase(installer, team),
        type: 'conversationUpdate',
        membersAdded: [{ id: botId }],
        channelData: {
          tenant: { id: installer.tenantId },
          team: { id: team.id },
          eventType: 'teamMemberAdded',
        },
      };
    },
    clickActivity(message, value, clickerId, invokeId) {
      const clicker = userOf(clickerId ?? message.userId);
      const conversation = conversations.get(message.conversationId);
      if (!conversation) throw new Error(`fake Bot Connector: no conversation ${message.conversationId}`);
      const action = asArray(message.card.actions)
        .map(asRecord)
        .find((candidate) => asRecord(candidate.data).value === value);
      if (!action) throw new Error(`fake Bot Connector: no button with value ${value}`);
      return {
        ...activityBase(clicker, conversation),
        ...(invokeId === undefined ? {} : { id: invokeId }),
        type: 'invoke',
        name: 'adaptiveCard/action',
        replyToId: message.activityId,
        value: {
          action: { type: 'Action.Execute', verb: action.verb, data: action.data },
          trigger: 'manual',
        },
      };
    },
    receiveInvokeAnswer(message, answer) {
      const body = asRecord(answer);
      const stored = conversations.get(message.conversationId)?.messages.get(message.activityId);
      if (body.statusCode === 200 && body.type === 'application/vnd.microsoft.card.adaptive' && stored) {
        const problems = adaptiveCardProblems(body.value).map((problem) => `invoke answer: ${problem}`);
        violations.push(...problems);
        if (problems.length === 0) {
          stored.activity = {
            ...stored.activity,
            attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', content: body.value }],
          };
        }
      } else if (body.type !== 'application/vnd.microsoft.error') {
        violations.push(`invoke answer of an unknown shape: ${JSON.stringify(answer)}`);
      }
      return typeof body.statusCode === 'number' ? body.statusCode : 0;
    },
    messagesOf(userId) {
      const conversation = [...conversations.values()].find(
        (candidate) => candidate.kind === 'personal' && candidate.members.has(userId),
      );
      if (!conversation) return [];
      return [...conversation.messages.entries()].map(([activityId, stored]) =>
        viewOf(conversation, activityId, stored),
      );
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/**
 * A local stand-in for Slack's servers, which cannot be reached from here (no internet): the Web
 * API methods the Slack transport calls, served on 127.0.0.1 the way Slack serves them (form-encoded
 * POSTs with `Authorization: Bearer xoxb-…`, `blocks` as a JSON string, `ok: false` answers), so
 * that the real `WebClient` of `@slack/web-api` runs against it unchanged. It also plays Slack's
 * side of a click: it builds the `block_actions` payload Slack would send for a button of a message
 * it holds.
 *
 * Every call is recorded and checked: the bearer token must be a workspace's, and messages must
 * respect Block Kit's limits (a violation is answered `invalid_blocks` and kept in `violations`).
 * Faults can be injected per method: latency, `429` with `Retry-After`, HTTP errors, `ok: false`;
 * and a call can be held, once recorded, until the test releases it.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A user of a fake workspace. */
export interface FakeSlackUser {
  id: string;
  email: string;
  /** A deactivated account: `users.lookupByEmail` still finds it, with `deleted: true`. */
  deleted?: boolean;
}

/** A workspace with the app installed. */
export interface FakeSlackWorkspace {
  teamId: string;
  botToken: string;
  users: FakeSlackUser[];
}

/** A recorded Web API call. */
export interface FakeSlackCall {
  method: string;
  /** The workspace whose token was presented, or null for a missing or unknown token. */
  teamId: string | null;
  /** Form fields; `blocks` parsed from its JSON. */
  params: Record<string, unknown>;
}

/** A button as a recipient sees it. */
export interface FakeSlackButton {
  text: string;
  value: string;
  actionId: string;
  blockId: string;
  style: string | null;
}

/** A message as it stands now in a direct-message channel. */
export interface FakeSlackMessage {
  teamId: string;
  channel: string;
  ts: string;
  /** The user the channel is with. */
  userId: string;
  /** The `text` fallback. */
  text: string;
  blocks: Record<string, unknown>[];
  /** The mrkdwn of every section, joined by a newline. */
  sections: string;
  buttons: FakeSlackButton[];
  /** The text of the `context` block, or null. */
  footer: string | null;
  /** How many times `chat.update` changed it. */
  updates: number;
}

/** A fault injected into the next calls of a method. */
export type FakeSlackFault =
  | { kind: 'rate-limited'; retryAfterSeconds: number }
  | { kind: 'http-error'; status: number }
  | { kind: 'error'; error: string };

/** The fake Slack, running. */
export interface FakeSlack {
  /** What to pass as `apiUrl`: `http://127.0.0.1:<port>/api/`. */
  apiUrl: string;
  calls: FakeSlackCall[];
  /** Payloads that broke Block Kit's limits (each was answered `invalid_blocks`); empty when all is well. */
  violations: string[];
  /** The recorded calls of one method. */
  callsTo(method: string): FakeSlackCall[];
  /** Adds a workspace, or a user to one. */
  addWorkspace(workspace: FakeSlackWorkspace): void;
  addUser(teamId: string, user: FakeSlackUser): void;
  /** Marks a user deactivated, as an admin would. */
  deactivate(teamId: string, userId: string): void;
  /** Removes a user from the workspace altogether. */
  removeUser(teamId: string, userId: string): void;
  /**
   * The next `times` calls of `method` meet `fault` instead of being served; with `match`, only
   * calls whose form fields have these values (say `{ channel: 'D…' }`).
   */
  inject(method: string, fault: FakeSlackFault, times?: number, match?: Record<string, string>): void;
  /** Every answer waits this long (ms) before it is sent. */
  setLatency(ms: number): void;
  /**
   * The next call of `method` waits, once received, until the function answered is called, then is
   * served as usual: how two calls are made to land in the order a test wants.
   */
  hold(method: string): () => void;
  /** The messages in the direct-message channel of a user, oldest first. */
  messagesOf(teamId: string, userId: string): FakeSlackMessage[];
  /** The most calls (of one method, or of all) that were in flight at the same time. */
  peakConcurrency(method?: string): number;
  /**
   * The form body Slack would POST to the interactivity URL when `userId` (of `teamId`) clicks the
   * button with `value` on the message `channel`/`ts`. Each body is a new click (its own
   * `action_ts`, unless `actionTs` is given); sending one body twice is how Slack repeats a request.
   */
  clickBody(click: {
    teamId: string;
    userId: string;
    channel: string;
    ts: string;
    value: string;
    actionTs?: string;
  }): string;
  close(): Promise<void>;
}

interface Channel {
  teamId: string;
  userId: string;
  messages: Map<string, StoredMessage>;
}

interface StoredMessage {
  ts: string;
  text: string;
  blocks: Record<string, unknown>[];
  updates: number;
}

type Json = Record<string, unknown>;

const asRecord = (value: unknown): Json =>
  typeof value === 'object' && value !== null ? (value as Json) : {};
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const textOf = (value: unknown): string => {
  const text = asRecord(value).text;
  return typeof text === 'string' ? text : '';
};

/** Block Kit's documented limits, checked on every message the transport sends. */
function blockKitViolations(blocks: unknown): string[] {
  if (!Array.isArray(blocks)) return ['blocks: not an array'];
  const problems: string[] = [];
  if (blocks.length > 50) problems.push(`blocks: ${blocks.length} blocks, more than 50`);
  const blockIds = new Set<string>();
  blocks.forEach((raw, index) => {
    const block = asRecord(raw);
    const at = `blocks[${index}]`;
    if (typeof block.block_id === 'string') {
      if (block.block_id.length > 255) problems.push(`${at}.block_id: longer than 255`);
      if (blockIds.has(block.block_id)) problems.push(`${at}.block_id: not unique`);
      blockIds.add(block.block_id);
    }
    if (block.type === 'section') {
      const text = textOf(block.text);
      if (asRecord(block.text).type !== 'mrkdwn') problems.push(`${at}.text: not mrkdwn`);
      if (text.length === 0 || text.length > 3000) problems.push(`${at}.text: ${text.length} characters`);
    } else if (block.type === 'actions') {
      const elements = asArray(block.elements);
      if (elements.length === 0 || elements.length > 25)
        problems.push(`${at}.elements: ${elements.length} elements`);
      const actionIds = new Set<string>();
      elements.forEach((rawElement, position) => {
        const element = asRecord(rawElement);
        const where = `${at}.elements[${position}]`;
        const text = textOf(element.text);
        const value = typeof element.value === 'string' ? element.value : '';
        const actionId = typeof element.action_id === 'string' ? element.action_id : '';
        if (element.type !== 'button') problems.push(`${where}: not a button`);
        if (asRecord(element.text).type !== 'plain_text') problems.push(`${where}.text: not plain_text`);
        if (text.length === 0 || text.length > 75) problems.push(`${where}.text: ${text.length} characters`);
        if (value.length > 2000) problems.push(`${where}.value: ${value.length} characters`);
        if (actionId === '' || actionId.length > 255 || actionIds.has(actionId)) {
          problems.push(`${where}.action_id: missing, too long or not unique`);
        }
        actionIds.add(actionId);
      });
    } else if (block.type === 'context') {
      const elements = asArray(block.elements);
      if (elements.length === 0 || elements.length > 10)
        problems.push(`${at}.elements: ${elements.length} elements`);
      for (const element of elements) {
        const text = textOf(element);
        if (text.length === 0 || text.length > 3000)
          problems.push(`${at}: element of ${text.length} characters`);
      }
    } else {
      problems.push(`${at}: unexpected block type ${String(block.type)}`);
    }
  });
  return problems;
}

function view(
  teamId: string,
  channel: string,
  channelState: Channel,
  message: StoredMessage,
): FakeSlackMessage {
  const sections = message.blocks
    .filter((block) => block.type === 'section')
    .map((block) => textOf(block.text));
  const buttons = message.blocks
    .filter((block) => block.type === 'actions')
    .flatMap((block) =>
      asArray(block.elements).map((raw) => {
        const element = asRecord(raw);
        return {
          text: textOf(element.text),
          value: String(element.value),
          actionId: String(element.action_id),
          blockId: String(block.block_id),
          style: typeof element.style === 'string' ? element.style : null,
        };
      }),
    );
  const context = message.blocks.find((block) => block.type === 'context');
  return {
    teamId,
    channel,
    ts: message.ts,
    userId: channelState.userId,
    text: message.text,
    blocks: message.blocks,
    sections: sections.join('\n'),
    buttons,
    footer: context ? asArray(context.elements).map(textOf).join(' ') : null,
    updates: message.updates,
  };
}

/** Starts a fake Slack on an ephemeral port of 127.0.0.1. */
export async function startFakeSlack(workspaces: FakeSlackWorkspace[] = []): Promise<FakeSlack> {
  const teams = new Map<string, { botToken: string; users: Map<string, FakeSlackUser> }>();
  const channels = new Map<string, Channel>();
  const faults = new Map<string, { fault: FakeSlackFault; match: Record<string, string> }[]>();
  const inFlight = new Map<string, number>();
  const peak = new Map<string, number>();
  const calls: FakeSlackCall[] = [];
  const violations: string[] = [];
  let latencyMs = 0;
  const holds: { method: string; until: Promise<void> }[] = [];
  let tsCounter = 0;
  let clickCounter = 0;

  const addWorkspace = (workspace: FakeSlackWorkspace) => {
    teams.set(workspace.teamId, {
      botToken: workspace.botToken,
      users: new Map(workspace.users.map((user) => [user.id, { ...user }])),
    });
  };
  for (const workspace of workspaces) addWorkspace(workspace);

  const teamOfToken = (authorization: string | undefined): string | null => {
    const token = /^Bearer (\S+)$/.exec(authorization ?? '')?.[1];
    for (const [teamId, team] of teams) if (team.botToken === token) return teamId;
    return null;
  };

  const serve = (method: string, teamId: string, params: Json): Json => {
    const team = teams.get(teamId)!;
    switch (method) {
      case 'users.lookupByEmail': {
        const email = String(params.email ?? '').toLowerCase();
        const user = [...team.users.values()].find((u) => u.email.toLowerCase() === email);
        if (!user) return { ok: false, error: 'users_not_found' };
        return {
          ok: true,
          user: {
            id: user.id,
            team_id: teamId,
            deleted: user.deleted === true,
            profile: { email: user.email },
          },
        };
      }
      case 'conversations.open': {
        const userId = String(params.users ?? '');
        const user = team.users.get(userId);
        if (!user) return { ok: false, error: 'user_not_found' };
        if (user.deleted) return { ok: false, error: 'user_disabled' };
        const id = `D${teamId.slice(1)}${userId.slice(1)}`;
        if (!channels.has(id)) channels.set(id, { teamId, userId, messages: new Map() });
        return { ok: true, channel: { id } };
      }
      case 'chat.postMessage':
      case 'chat.update': {
        const channel = channels.get(String(params.channel ?? ''));
        if (!channel || channel.teamId !== teamId) return { ok: false, error: 'channel_not_found' };
        // Assumed, not checked against Slack: a deactivated user's direct-message channel is
        // archived, and a removed user's is gone.
        if (method === 'chat.postMessage') {
          const member = team.users.get(channel.userId);
          if (!member) return { ok: false, error: 'channel_not_found' };
          if (member.deleted) return { ok: false, error: 'is_archived' };
        }
        if (typeof params.text !== 'string' || params.text === '') return { ok: false, error: 'no_text' };
        const problems = blockKitViolations(params.blocks);
        if (problems.length > 0) {
          violations.push(...problems.map((problem) => `${method}: ${problem}`));
          return { ok: false, error: 'invalid_blocks', errors: problems };
        }
        const blocks = params.blocks as Json[];
        if (method === 'chat.update') {
          const message = channel.messages.get(String(params.ts ?? ''));
          if (!message) return { ok: false, error: 'message_not_found' };
          message.text = params.text;
          message.blocks = blocks;
          message.updates += 1;
          return { ok: true, channel: params.channel, ts: message.ts, text: message.text };
        }
        tsCounter += 1;
        const ts = `${1767225600 + tsCounter}.${String(tsCounter).padStart(6, '0')}`;
        channel.messages.set(ts, { ts, text: params.text, blocks, updates: 0 });
        return { ok: true, channel: params.channel, ts, message: { text: params.text, ts } };
      }
      default:
        return { ok: false, error: 'unknown_method' };
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const method = (req.url ?? '').replace(/^\/api\//, '');
    for (const counted of [method, '']) {
      inFlight.set(counted, (inFlight.get(counted) ?? 0) + 1);
      peak.set(counted, Math.max(peak.get(counted) ?? 0, inFlight.get(counted) ?? 0));
    }
    try {
      if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const params: Json = Object.fromEntries(form);
      if (typeof params.blocks === 'string') params.blocks = JSON.parse(params.blocks);
      const teamId = teamOfToken(req.headers.authorization);
      calls.push({ method, teamId, params });
      const held = holds.findIndex((planned) => planned.method === method);
      if (held >= 0) await holds.splice(held, 1)[0]?.until;
      const planned = faults.get(method) ?? [];
      const index = planned.findIndex(({ match }) =>
        Object.entries(match).every(([name, value]) => params[name] === value),
      );
      const fault = index < 0 ? undefined : planned.splice(index, 1)[0]?.fault;
      const reply = (status: number, body: Json, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
        res.end(JSON.stringify(body));
      };
      if (fault?.kind === 'rate-limited') {
        reply(429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(fault.retryAfterSeconds) });
      } else if (fault?.kind === 'http-error') {
        reply(fault.status, { ok: false, error: 'fatal_error' });
      } else if (fault?.kind === 'error') {
        reply(200, { ok: false, error: fault.error });
      } else if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) {
        reply(200, { ok: false, error: 'invalid_form_data' });
      } else if (teamId === null) {
        reply(200, { ok: false, error: req.headers.authorization ? 'invalid_auth' : 'not_authed' });
      } else {
        reply(200, serve(method, teamId, params));
      }
    } finally {
      for (const counted of [method, '']) inFlight.set(counted, (inFlight.get(counted) ?? 1) - 1);
    }
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      res.writeHead(500).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  return {
    apiUrl: `http://127.0.0.1:${port}/api/`,
    calls,
    violations,
    callsTo: (method) => calls.filter((call) => call.method === method),
    addWorkspace,
    addUser(teamId, user) {
      teams.get(teamId)?.users.set(user.id, { ...user });
    },
    deactivate(teamId, userId) {
      const user = teams.get(teamId)?.users.get(userId);
      if (user) user.deleted = true;
    },
    removeUser(teamId, userId) {
      teams.get(teamId)?.users.delete(userId);
    },
    inject(method, fault, times = 1, match = {}) {
      const planned = Array.from({ length: times }, () => ({ fault, match }));
      faults.set(method, [...(faults.get(method) ?? []), ...planned]);
    },
    setLatency(ms) {
      latencyMs = ms;
    },
    hold(method) {
      let release = () => {};
      holds.push({
        method,
        until: new Promise((resolve) => {
          release = resolve;
        }),
      });
      return release;
    },
    messagesOf(teamId, userId) {
      return [...channels.entries()]
        .filter(([, channel]) => channel.teamId === teamId && channel.userId === userId)
        .flatMap(([id, channel]) => [...channel.messages.values()].map((m) => view(teamId, id, channel, m)));
    },
    peakConcurrency: (method = '') => peak.get(method) ?? 0,
    clickBody({ teamId, userId, channel, ts, value, actionTs }) {
      const message = channels.get(channel)?.messages.get(ts);
      const button = message
        ? view(teamId, channel, channels.get(channel)!, message).buttons.find((b) => b.value === value)
        : undefined;
      if (!button) throw new Error(`fake Slack: no button with value ${value} on ${channel}/${ts}`);
      clickCounter += 1;
      const clickTs = actionTs ?? `${ts.split('.')[0]}.${String(clickCounter).padStart(6, '0')}`;
      const payload = {
        type: 'block_actions',
        team: { id: teamId, domain: 'example' },
        user: { id: userId, team_id: teamId, username: userId.toLowerCase() },
        api_app_id: 'A0CHATNOTIFY',
        container: { type: 'message', message_ts: ts, channel_id: channel, is_ephemeral: false },
        channel: { id: channel, name: 'directmessage' },
        message: { ts, text: message?.text, blocks: message?.blocks },
        response_url: `http://127.0.0.1:${port}/actions/response`,
        trigger_id: `trigger.${clickTs}`,
        actions: [
          {
            type: 'button',
            action_id: button.actionId,
            block_id: button.blockId,
            text: { type: 'plain_text', text: button.text, emoji: true },
            value: button.value,
            action_ts: clickTs,
          },
        ],
      };
      return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Koa from 'koa';
import { httpCallbacks } from '../../adapters/callbacks/index.js';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { type SlackTransport, slackTransport } from '../../adapters/chat/slack/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { createNotifier, type Notifier } from '../../core/notifier.js';
import type { ChatTransport } from '../../core/ports/chat-transport.js';
import type { Logger } from '../../core/ports/logger.js';
import { notifyRouter } from '../../hosts/express/index.js';
import { notifyMiddleware } from '../../hosts/koa/index.js';
import { type FakeSlack, startFakeSlack } from './fake-slack.js';
import { type ManualClock, manualClock } from './manual-clock.js';
import { slackSignatureHeaders, testSigningSecret } from './slack-signing.js';
import {
  acmeWorkspace,
  fastRetry,
  globexWorkspace,
  slackIdOf,
  testInstallations,
} from './slack-workspace.js';
import { testKeys, testSeed } from './test-seed.js';

/** The two hosts. */
export type SlackHostKind = 'express' | 'koa';

/** How the application around the API is built. */
export interface SlackAppOptions {
  /** Also deliver through the local inbox (everyone is then on Slack and in the inbox). */
  inbox?: boolean;
  /** Mount a JSON body parser before the API (a mistake the hosts must report loudly). */
  bodyParserFirst?: boolean;
  logger?: Logger;
}

/** An application (Express or Koa) with the API at `/chat`, Slack against a fake Slack, in virtual time. */
export interface SlackApp {
  /** `http://127.0.0.1:<port>/chat`. */
  baseUrl: string;
  clock: ManualClock;
  notifier: Notifier;
  slack: FakeSlack;
  transport: SlackTransport;
  keys: typeof testKeys;
  /**
   * POSTs a signed click, as Slack would, by `clicker` (the owner by default) on the button with
   * `value` of message `index` of `owner`; answers the response, without waiting for the
   * processing that follows it.
   */
  click(input: {
    owner: string;
    index?: number;
    value: string;
    clicker?: string;
    teamId?: string;
  }): Promise<{ status: number; text: string; body: string }>;
  /** POSTs an interactivity request with this body and these headers, as they are. */
  post(body: string, headers: Record<string, string>): Promise<{ status: number; text: string }>;
  /** What `owner` sees on Slack (acme's workspace). */
  messagesOf(owner: string): ReturnType<FakeSlack['messagesOf']>;
  close(): Promise<void>;
}

const koaJsonParser: Koa.Middleware = async (ctx, next) => {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  (ctx.request as { body?: unknown }).body = Buffer.concat(chunks).toString('utf8');
  await next();
};

function expressApp(notifier: Notifier, options: SlackAppOptions): RequestListener {
  const app = express();
  if (options.bodyParserFirst) app.use(express.urlencoded({ extended: false }));
  app.use('/chat', notifyRouter(notifier));
  return app;
}

function koaApp(notifier: Notifier, options: SlackAppOptions): RequestListener {
  const app = new Koa();
  if (options.bodyParserFirst) app.use(koaJsonParser);
  app.use(notifyMiddleware(notifier, { prefix: '/chat' }));
  return app.callback();
}

/** Starts a fake Slack and an application of the given kind on ephemeral ports of 127.0.0.1. */
export async function startSlackApp(kind: SlackHostKind, options: SlackAppOptions = {}): Promise<SlackApp> {
  const slack = await startFakeSlack([acmeWorkspace(), globexWorkspace()]);
  const clock = manualClock(Date.parse('2026-03-01T09:00:00.000Z'));
  const transport = slackTransport({
    signingSecret: testSigningSecret,
    apiUrl: slack.apiUrl,
    installation: testInstallations,
    retry: fastRetry,
    clock,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  const transports: ChatTransport[] = options.inbox ? [transport, inboxTransport({ clock })] : [transport];
  const notifier = createNotifier({
    storage: memoryStorage({ clock }),
    transports,
    clock,
    callbacks: httpCallbacks({ allowInsecure: true }),
    rateLimits: {
      perKey: { burst: 1000, perSecond: 1000 },
      perOrganization: { burst: 1000, perSecond: 1000 },
    },
  });
  await notifier.seed(testSeed);
  const server: Server = createServer(
    kind === 'express' ? expressApp(notifier, options) : koaApp(notifier, options),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}/chat`;
  const team = acmeWorkspace().teamId;

  const post = async (body: string, headers: Record<string, string>) => {
    const response = await fetch(`${baseUrl}/slack/interactivity`, { method: 'POST', headers, body });
    return { status: response.status, text: await response.text() };
  };

  return {
    baseUrl,
    clock,
    notifier,
    slack,
    transport,
    keys: testKeys,
    messagesOf: (owner) => slack.messagesOf(team, slackIdOf(owner)),
    async click({ owner, index = 0, value, clicker, teamId = team }) {
      const message = slack.messagesOf(team, slackIdOf(owner))[index];
      if (!message) throw new Error(`${owner} has no Slack message ${index}`);
      const body = slack.clickBody({
        teamId,
        userId: slackIdOf(clicker ?? owner),
        channel: message.channel,
        ts: message.ts,
        value,
      });
      const answer = await post(body, slackSignatureHeaders(body, clock.now() / 1000));
      return { ...answer, body };
    },
    post,
    async close() {
      server.closeAllConnections();
      server.close();
      await transport.idle();
      await notifier.stop();
      await slack.close();
    },
  };
}

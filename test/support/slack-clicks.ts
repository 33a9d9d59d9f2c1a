import { expect } from 'vitest';
import type { SlackTransport } from '../../adapters/chat/slack/index.js';
import type { HttpResponse } from '../../core/http/types.js';
import type { Notifier } from '../../core/notifier.js';
import type { ChatTransport } from '../../core/ports/chat-transport.js';
import type { StoragePorts } from '../../core/ports/storage.js';
import type { FakeSlack } from './fake-slack.js';
import { slackSignatureHeaders } from './slack-signing.js';
import { slackIdOf } from './slack-workspace.js';
import { testKeys } from './test-seed.js';

/**
 * Hands `body` to the transport's interactivity endpoint as Slack sends it at `nowSeconds` (Unix
 * seconds): a form POST signed with the tests' signing secret.
 */
export async function postInteraction(
  transport: Pick<ChatTransport, 'routes'>,
  body: string,
  nowSeconds: number,
): Promise<HttpResponse> {
  const [route] = transport.routes;
  if (!route) throw new Error('the transport serves no interactivity endpoint');
  return route.handle(
    {
      method: 'POST',
      path: route.path,
      query: new URLSearchParams(),
      headers: slackSignatureHeaders(body, nowSeconds),
      body: new TextEncoder().encode(body),
      clientAddress: '127.0.0.1',
    },
    {},
  );
}

/**
 * Makes the Slack copy of `requestId` to `recipient` (of the acme organization, in `teamId`) what an
 * earlier release left: a ref naming only the message, and the record of the copy it kept.
 */
export async function asEarlierRelease(
  storage: StoragePorts,
  requestId: string,
  recipient: string,
  teamId: string,
): Promise<{ channel: string; ts: string }> {
  const copy = (await storage.deliveries.listDeliveries(requestId)).find(
    (each) => each.recipient === recipient && each.platform === 'slack',
  );
  const { channel, ts } = copy?.ref ?? {};
  if (!copy || channel === undefined || ts === undefined) {
    throw new Error(`no Slack copy of ${requestId} to ${recipient}`);
  }
  await storage.deliveries.addDelivery({ ...copy, ref: { channel, ts } });
  await storage.transportState.set(
    `slack:copy:${channel}:${ts}`,
    JSON.stringify(['acme', teamId, requestId, recipient, slackIdOf(recipient), 0]),
  );
  return { channel, ts };
}

/** A click on the newest message of `owner`, as `clicker` (the owner by default). */
export interface NewestClick {
  owner: string;
  value: string;
  clicker?: string;
  /** Changes the body before it is signed (as only a message built so could make Slack send it). */
  edit?: (body: string) => string;
}

/**
 * Clicks through `transport`'s endpoint on a message the fake Slack shows in `teamId`, at
 * `nowSeconds`, expects the `200` Slack gets at once, and waits until the click is applied.
 */
export async function clickNewest(
  slack: FakeSlack,
  transport: SlackTransport,
  at: { teamId: string; nowSeconds: number },
  { owner, value, clicker, edit }: NewestClick,
): Promise<void> {
  const message = slack.messagesOf(at.teamId, slackIdOf(owner)).at(-1);
  if (!message) throw new Error(`${owner} has no message`);
  const body = slack.clickBody({
    teamId: at.teamId,
    userId: slackIdOf(clicker ?? owner),
    channel: message.channel,
    ts: message.ts,
    value,
  });
  expect((await postInteraction(transport, edit ? edit(body) : body, at.nowSeconds)).status).toBe(200);
  await transport.idle();
}

/** The option `email` chose in `requestId`, as alice's status read shows it, or null. */
export async function answerOf(notifier: Notifier, requestId: string, email: string): Promise<string | null> {
  const status = await notifier.status(await notifier.authenticate(testKeys.alice), requestId);
  return status.responses.find((response) => response.user_email === email)?.option_value ?? null;
}

import { afterEach, describe, expect, it, vi } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { isLaterAction } from '../../adapters/chat/slack/clicks.js';
import {
  type SlackTransport,
  type SlackTransportOptions,
  slackTransport,
} from '../../adapters/chat/slack/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import type { MessageView } from '../../core/domain/message-view.js';
import { createNotifier, type Notifier } from '../../core/notifier.js';
import type { StoragePorts } from '../../core/ports/storage.js';
import { requestView } from '../../core/request/message-view.js';
import { inboxOf } from '../support/api-requests.js';
import { capturingLogger } from '../support/capturing-logger.js';
import { type FakeSlack, startFakeSlack } from '../support/fake-slack.js';
import { manualClock } from '../support/manual-clock.js';
import {
  answerOf,
  asEarlierRelease,
  clickNewest,
  type NewestClick,
  postInteraction,
} from '../support/slack-clicks.js';
import { testSigningSecret } from '../support/slack-signing.js';
import {
  acmeTeamId,
  acmeWorkspace,
  bob,
  carol,
  dmChannelOf,
  fastRetry,
  globexWorkspace,
  slackIdOf,
  testInstallations,
} from '../support/slack-workspace.js';
import { numberedUsers, testKeys, testSeed } from '../support/test-seed.js';

const team = acmeTeamId;

interface World {
  slack: FakeSlack;
  transport: SlackTransport;
  notifier: Notifier;
  storage: StoragePorts;
  logger: ReturnType<typeof capturingLogger>;
  clock: ReturnType<typeof manualClock>;
  send(body: unknown, idempotencyKey?: string): Promise<{ status: number; json: Record<string, unknown> }>;
}

describe('Slack transport against a fake Slack Web API', () => {
  let world: World | undefined;

  afterEach(async () => {
    if (!world) return;
    await world.notifier.stop();
    expect(world.slack.violations).toEqual([]);
    await world.slack.close();
    world = undefined;
  });

  /** A world whose notifier sees its storage through `through` (the world's `storage` is the store itself). */
  async function start(
    options: Partial<SlackTransportOptions> = {},
    { inbox = false, through = (storage: StoragePorts) => storage } = {},
  ): Promise<World> {
    const slack = await startFakeSlack([acmeWorkspace(), globexWorkspace()]);
    const clock = manualClock();
    const logger = capturingLogger();
    const transport = slackTransport({
      signingSecret: testSigningSecret,
      apiUrl: slack.apiUrl,
      installation: testInstallations,
      retry: fastRetry,
      clock,
      logger,
      ...options,
    });
    const storage = memoryStorage({ clock });
    const notifier = createNotifier({
      storage: through(storage),
      transports: inbox ? [transport, inboxTransport({ clock })] : [transport],
      clock,
      logger,
      rateLimits: {
        perKey: { burst: 1000, perSecond: 1000 },
        perOrganization: { burst: 1000, perSecond: 1000 },
      },
    });
    await notifier.seed(testSeed);
    world = {
      slack,
      transport,
      notifier,
      storage,
      logger,
      clock,
      async send(body, idempotencyKey) {
        const response = await notifier.handle({
          method: 'POST',
          url: '/api/notify',
          headers: {
            'x-api-key': testKeys.alice,
            'content-type': 'application/json',
            ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
          },
          body: [Buffer.from(JSON.stringify(body))],
          clientAddress: '127.0.0.1',
        });
        return {
          status: response?.status ?? 0,
          json: JSON.parse(response?.body ?? '{}') as Record<string, unknown>,
        };
      },
    };
    return world;
  }

  const interactive = (emails: string[]) => ({
    user_emails: emails,
    message: 'Deploy *v2*?',
    response_request: {
      options: [
        { text: 'Approve', value: 'approve' },
        { text: 'Reject', value: 'reject' },
      ],
      timeout_minutes: 60,
    },
  });

  /** An `onTimeout` request to bob sent in `world`, his message, and the body of his click on it. */
  async function requestToBob(world: World) {
    const body = interactive([bob]);
    const requestId = (
      await world.send({ ...body, response_request: { ...body.response_request, disable: 'onTimeout' } })
    ).json.request_id as string;
    const message = world.slack.messagesOf(team, slackIdOf(bob)).at(-1);
    if (!message) throw new Error('bob has no message');
    const clickAt = (value: string, actionTs: string) =>
      world.slack.clickBody({
        teamId: team,
        userId: slackIdOf(bob),
        channel: message.channel,
        ts: message.ts,
        value,
        actionTs,
      });
    return { requestId, message, clickAt };
  }

  it('reaches a user by email, opens the direct-message channel and posts there with the bot token', async () => {
    const { slack, send } = await start();
    expect((await send({ user_emails: [bob], message: 'Hello *Bob*' })).status).toBe(200);
    expect(slack.calls.map((call) => [call.method, call.teamId])).toEqual([
      ['users.lookupByEmail', team],
      ['conversations.open', team],
      ['chat.postMessage', team],
    ]);
    expect(slack.callsTo('users.lookupByEmail')[0]?.params).toEqual({ email: bob });
    expect(slack.callsTo('conversations.open')[0]?.params).toEqual({ users: slackIdOf(bob) });
    expect(slack.callsTo('chat.postMessage')[0]?.params).toMatchObject({
      channel: dmChannelOf(team, bob),
      text: 'Hello Bob',
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'Hello *Bob*' } }],
    });
  });

  it('uses the workspace of the organization: another organization, another token', async () => {
    const { slack, notifier } = await start();
    const response = await notifier.handle({
      method: 'POST',
      url: '/api/notify',
      headers: { 'x-api-key': testKeys.gina, 'content-type': 'application/json' },
      body: [Buffer.from(JSON.stringify({ user_emails: ['gina@globex.test'], message: 'Hi' }))],
      clientAddress: '127.0.0.1',
    });
    expect(response?.status).toBe(200);
    expect(new Set(slack.calls.map((call) => call.teamId))).toEqual(new Set(['T0GLOBEX']));
    expect(slack.messagesOf('T0GLOBEX', slackIdOf('gina@globex.test'))).toHaveLength(1);
  });

  it('looks each user up once, then from the cache', async () => {
    const { slack, send } = await start();
    expect((await send({ user_emails: [bob, carol], message: 'one' })).status).toBe(200);
    expect((await send({ user_emails: [bob, carol], message: 'two' })).status).toBe(200);
    expect(slack.callsTo('users.lookupByEmail')).toHaveLength(2);
    expect(slack.messagesOf(team, slackIdOf(bob)).map((message) => message.text)).toEqual(['one', 'two']);
  });

  it('does not reach a user who is not in the workspace, or is deactivated: both are named in the 500, and nobody is sent anything', async () => {
    const { slack, send } = await start();
    slack.removeUser(team, slackIdOf(bob));
    slack.deactivate(team, slackIdOf(carol));
    const answer = await send({ user_emails: [bob, carol, 'dave@acme.test'], message: 'Hello' });
    expect(answer.status).toBe(500);
    expect(answer.json.details).toBe(
      `Delivery failed for: ${bob}, ${carol} (no chat platform reaches them; nothing was sent to anyone)`,
    );
    expect(slack.callsTo('conversations.open')).toEqual([]);
    expect(slack.callsTo('chat.postMessage')).toEqual([]);
  });

  it('sends an interactive request to nobody while a recipient is on no platform, and to everyone once when a retry with its key finds them', async () => {
    const { slack, send, notifier, clock } = await start();
    slack.removeUser(team, slackIdOf(carol));
    const body = interactive([bob, carol]);
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const refused = await send(body, 'new-hire');
      expect(refused.status).toBe(500);
      expect(refused.json.details).toBe(
        `Delivery failed for: ${carol} (no chat platform reaches them; nothing was sent to anyone)`,
      );
      expect(slack.callsTo('chat.postMessage')).toEqual([]);
    }
    // Carol joins the workspace; once the transport's five minutes of remembering that she was not
    // found have passed, the same send reaches both, each once, under one request.
    slack.addUser(team, { id: slackIdOf(carol), email: carol });
    clock.advance(5 * 60_000 + 1);
    const sent = await send(body, 'new-hire');
    expect(sent.status).toBe(200);
    expect(slack.messagesOf(team, slackIdOf(bob))).toHaveLength(1);
    expect(slack.messagesOf(team, slackIdOf(carol))).toHaveLength(1);
    const status = await notifier.handle({
      method: 'GET',
      url: `/api/notify/status/${String(sent.json.request_id)}`,
      headers: { 'x-api-key': testKeys.alice },
      body: [],
      clientAddress: '127.0.0.1',
    });
    expect(JSON.parse(status?.body ?? '{}')).toMatchObject({ status: 'pending' });
  });

  it('does not reach anyone of an organization without an installation, and calls Slack for none of them', async () => {
    const { slack, send } = await start({ installation: () => null });
    const answer = await send({ user_emails: [bob], message: 'Hello' });
    expect(answer.status).toBe(500);
    expect(answer.json.details).toContain(bob);
    expect(slack.calls).toEqual([]);
  });

  it('counts a token Slack refuses as a failed delivery, not as a user who is not on Slack', async () => {
    const { slack, send } = await start({ installation: () => ({ teamId: team, botToken: 'xoxb-revoked' }) });
    const answer = await send({ user_emails: [bob], message: 'Hello' });
    expect(answer.status).toBe(500);
    expect(answer.json.details).toContain(bob);
    expect(slack.calls.map((call) => [call.method, call.teamId])).toEqual([['users.lookupByEmail', null]]);
  });

  it('looks a cached user up again once Slack says the account is deactivated', async () => {
    const { slack, send } = await start();
    expect((await send({ user_emails: [bob], message: 'one' })).status).toBe(200);
    slack.deactivate(team, slackIdOf(bob));
    const failed = await send({ user_emails: [bob], message: 'two' });
    expect(failed.status).toBe(500);
    expect(failed.json.details).toContain(bob);
    expect(slack.callsTo('users.lookupByEmail')).toHaveLength(2);
    const again = await send({ user_emails: [bob], message: 'three' });
    expect(again.status).toBe(500);
    // The cache now says bob is not on Slack: no further attempt to post to him. His channel was
    // opened once and cached; the post into it that Slack refused made the address be looked up.
    expect(slack.callsTo('conversations.open')).toHaveLength(1);
    expect(slack.callsTo('chat.postMessage')).toHaveLength(2);
    expect(slack.messagesOf(team, slackIdOf(bob)).map((message) => message.text)).toEqual(['one']);
  });

  it.each([
    ['deactivated', (slack: FakeSlack) => slack.deactivate(team, slackIdOf(bob))],
    ['removed', (slack: FakeSlack) => slack.removeUser(team, slackIdOf(bob))],
  ])(
    'counts a user %s while their id was cached as no Slack recipient: a send the inbox reached answers 200',
    async (_, leave) => {
      const { slack, send, logger, notifier } = await start({}, { inbox: true });
      expect((await send({ user_emails: [bob], message: 'one' })).status).toBe(200);
      leave(slack);
      expect((await send({ user_emails: [bob], message: 'two' })).status).toBe(200);
      expect(await inboxOf(notifier, bob)).toHaveLength(2);
      expect(slack.messagesOf(team, slackIdOf(bob)).map((message) => message.text)).not.toContain('two');
      expect(logger.entries.filter((entry) => entry.message === 'delivery failed')).toEqual([]);
    },
  );

  it('follows a user whose account was replaced under the same address', async () => {
    const { slack, send } = await start();
    expect((await send({ user_emails: [bob], message: 'one' })).status).toBe(200);
    slack.removeUser(team, slackIdOf(bob));
    slack.addUser(team, { id: 'U0NEWBOB', email: bob });
    expect((await send({ user_emails: [bob], message: 'two' })).status).toBe(200);
    expect(slack.messagesOf(team, 'U0NEWBOB').map((message) => message.text)).toEqual(['two']);
  });

  it("waits out Slack's 429 for its Retry-After, then delivers", async () => {
    const { slack, send, logger } = await start();
    slack.inject('chat.postMessage', { kind: 'rate-limited', retryAfterSeconds: 1 });
    expect((await send({ user_emails: [bob], message: 'Hello' })).status).toBe(200);
    expect(slack.callsTo('chat.postMessage')).toHaveLength(2);
    expect(slack.messagesOf(team, slackIdOf(bob))).toHaveLength(1);
    expect(logger.entries).toContainEqual({
      level: 'warn',
      message: 'Slack rate limit: waiting before retrying',
      fields: { retryAfterSeconds: 1, method: 'chat.postMessage' },
    });
  });

  it("waits Slack's Retry-After and no longer: the retries' own pauses are for failures, not for a 429", async () => {
    // The default pauses between retries, 1 to 2 s for the first: the SDK added one after the wait.
    const { slack, send } = await start({ retry: {} });
    slack.inject('chat.postMessage', { kind: 'rate-limited', retryAfterSeconds: 1 });
    const started = performance.now();
    expect((await send({ user_emails: [bob], message: 'Hello' })).status).toBe(200);
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(1000);
    expect(waited).toBeLessThan(1900);
    expect(slack.callsTo('chat.postMessage')).toHaveLength(2);
  });

  it("fails a delivery at once when Slack's 429 asks to wait longer than retry.maxRetryAfterMs", async () => {
    const { slack, send, logger } = await start({ retry: { ...fastRetry, maxRetryAfterMs: 30_000 } });
    slack.inject('chat.postMessage', { kind: 'rate-limited', retryAfterSeconds: 3600 });
    const started = performance.now();
    const sent = await send({ user_emails: [bob], message: 'Hello' });
    expect(performance.now() - started).toBeLessThan(5000);
    expect(sent.status).toBe(500);
    expect(sent.json.details).toContain(bob);
    // Not tried again, and not paused: Slack posted nothing.
    expect(slack.callsTo('chat.postMessage')).toHaveLength(1);
    expect(slack.messagesOf(team, slackIdOf(bob))).toHaveLength(0);
    expect(logger.entries).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: 'delivery failed',
        fields: expect.objectContaining({
          error: expect.stringContaining('Slack answered 429 and asked to wait 3600 s'),
        }),
      }),
    );
    // The workspace is not paused: the next send goes out at once.
    expect((await send({ user_emails: [bob], message: 'Again' })).status).toBe(200);
    expect(slack.messagesOf(team, slackIdOf(bob)).map((message) => message.text)).toEqual(['Again']);
  });

  it('posts no message twice when Slack answers a post after the timeout: the recipient is named in the 500', async () => {
    const { slack, send, logger } = await start({ requestTimeoutMs: 300 });
    const release = slack.hold('chat.postMessage');
    const answer = send({ user_emails: [bob], message: 'Deploy started' });
    // undici keeps its deadlines on a coarse timer: the call times out within about a second.
    const sent = await answer;
    release();
    expect(sent.status).toBe(500);
    expect(sent.json.details).toContain(bob);
    // Slack posted the held call once it was let through; nothing posted it a second time.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(slack.callsTo('chat.postMessage')).toHaveLength(1);
    expect(slack.messagesOf(team, slackIdOf(bob)).map((message) => message.text)).toEqual(['Deploy started']);
    // What the docs (slack.md) tell the operator to look for.
    expect(logger.entries).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: 'delivery failed',
        fields: expect.objectContaining({
          error: expect.stringContaining('Slack may have posted the message, so it is not posted again'),
        }),
      }),
    );
  });

  it('posts again after a 5xx, a failure Slack answered', async () => {
    const { slack, send } = await start();
    slack.inject('chat.postMessage', { kind: 'http-error', status: 502 });
    expect((await send({ user_emails: [bob], message: 'one' })).status).toBe(200);
    expect(slack.callsTo('chat.postMessage')).toHaveLength(2);
    expect(slack.messagesOf(team, slackIdOf(bob))).toHaveLength(1);
  });

  it('gives up after the bounded retries, names the recipient in the 500, and a retry delivers only the missing copy', async () => {
    const { slack, send } = await start();
    slack.inject('chat.postMessage', { kind: 'http-error', status: 503 }, 2, {
      channel: dmChannelOf(team, carol),
    });
    const first = await send(interactive([bob, carol]), 'retry-me');
    expect(first.status).toBe(500);
    expect(first.json.details).toContain(carol);
    expect(first.json.details).not.toContain(bob);
    expect(slack.callsTo('chat.postMessage')).toHaveLength(3);

    const second = await send(interactive([bob, carol]), 'retry-me');
    expect(second.status).toBe(200);
    expect(slack.messagesOf(team, slackIdOf(bob))).toHaveLength(1);
    expect(slack.messagesOf(team, slackIdOf(carol))).toHaveLength(1);
  });

  it('counts a lookup that fails for a passing reason as a failed delivery: named in the 500, reached on retry', async () => {
    const { slack, send } = await start();
    slack.inject('users.lookupByEmail', { kind: 'http-error', status: 502 }, 2, { email: carol });
    const first = await send({ user_emails: [bob, carol], message: 'Hello' }, 'lookup-retry');
    expect(first.status).toBe(500);
    expect(first.json.details).toContain(carol);
    expect(first.json.details).not.toContain(bob);
    const second = await send({ user_emails: [bob, carol], message: 'Hello' }, 'lookup-retry');
    expect(second.status).toBe(200);
    expect(slack.messagesOf(team, slackIdOf(bob))).toHaveLength(1);
    expect(slack.messagesOf(team, slackIdOf(carol))).toHaveLength(1);
  });

  it('fans out to 50 recipients in parallel, never more calls at once than the concurrency limit', async () => {
    const { slack, send } = await start({ concurrency: 4 });
    slack.setLatency(15);
    const recipients = numberedUsers.slice(0, 50);
    expect((await send({ user_emails: recipients, message: 'All hands' })).status).toBe(200);
    for (const email of recipients) expect(slack.messagesOf(team, slackIdOf(email))).toHaveLength(1);
    expect(slack.peakConcurrency()).toBeLessThanOrEqual(4);
    expect(slack.peakConcurrency()).toBeGreaterThan(1);
  });

  it('by default posts every copy of a send to 50 recipients at once: one Web API round trip', async () => {
    const { slack, send } = await start();
    const recipients = numberedUsers.slice(0, 50);
    // Look the users up and open their channels first, so that only the posts remain.
    expect((await send({ user_emails: recipients, message: 'Warm up' })).status).toBe(200);
    slack.setLatency(50);
    expect((await send({ user_emails: recipients, message: 'All hands' })).status).toBe(200);
    for (const email of recipients) expect(slack.messagesOf(team, slackIdOf(email))).toHaveLength(2);
    expect(slack.peakConcurrency('chat.postMessage')).toBe(50);
  });

  it('gives up on a call Slack does not answer within requestTimeoutMs, and names the recipient in the 500', async () => {
    const { slack, send } = await start({ requestTimeoutMs: 100 });
    expect((await send({ user_emails: [bob], message: 'Warm up' })).status).toBe(200);
    // Slack would answer both attempts (fastRetry) successfully, but each is cut at its deadline
    // (kept to within a second: undici's timers are coarse).
    slack.setLatency(5000);
    const sent = await send({ user_emails: [bob], message: 'Hello' });
    expect(sent.status).toBe(500);
    expect(sent.json.details).toContain(bob);
  });

  /** Clicks `value` on the newest message of `owner`, as `clicker` (the owner by default). */
  const click = (
    { slack, transport, clock }: World,
    owner: string,
    value: string,
    options: Pick<NewestClick, 'clicker' | 'edit'> = {},
  ) =>
    clickNewest(
      slack,
      transport,
      { teamId: team, nowSeconds: clock.now() / 1000 },
      { owner, value, ...options },
    );

  it('shows the request as it stands on a copy whose update Slack lost, once its recipient clicks it', async () => {
    const world = await start();
    const { send, slack, clock, notifier } = world;
    const requestId = (await send(interactive([bob, carol]))).json.request_id as string;
    // Slack fails every try of the timeout's update of bob's copy; the refreshes that would follow
    // are not run: the copy keeps its buttons, as once every refresh has failed.
    slack.inject('chat.update', { kind: 'http-error', status: 503 }, 2, {
      channel: dmChannelOf(team, bob),
    });
    clock.advance(61 * 60_000);
    await notifier.runDueWork();
    expect(slack.messagesOf(team, slackIdOf(bob))[0]?.buttons).not.toEqual([]);
    expect(slack.messagesOf(team, slackIdOf(carol))[0]?.buttons).toEqual([]);
    await click(world, bob, 'approve');
    expect(await answerOf(notifier, requestId, bob)).toBeNull();
    const [copy] = slack.messagesOf(team, slackIdOf(bob));
    expect(copy?.buttons).toEqual([]);
    expect(copy?.footer).toContain('expired');
  });

  it('updates each copy once when a click after the deadline finishes the request itself', async () => {
    const world = await start();
    const { send, slack, clock, notifier } = world;
    const requestId = (await send(interactive([bob, carol]))).json.request_id as string;
    clock.advance(61 * 60_000);
    await click(world, bob, 'approve');
    expect(await answerOf(notifier, requestId, bob)).toBeNull();
    expect(slack.callsTo('chat.update').map((call) => call.params.channel)).toEqual(
      expect.arrayContaining([dmChannelOf(team, bob), dmChannelOf(team, carol)]),
    );
    expect(slack.callsTo('chat.update')).toHaveLength(2);
  });

  it.each(['message_not_found', 'channel_not_found', 'is_archived', 'cant_update_message'])(
    'leaves a message Slack answers %s to as it is, without refreshing every copy of its request again',
    async (error) => {
      const world = await start();
      const { send, slack, clock, notifier, logger } = world;
      await send(interactive([bob, carol]));
      slack.inject('chat.update', { kind: 'error', error }, 1, { channel: dmChannelOf(team, bob) });
      clock.advance(61 * 60_000);
      await notifier.runDueWork();
      // Past every refresh a failed update would have scheduled.
      for (let hour = 0; hour < 3; hour += 1) {
        clock.advance(60 * 60_000);
        await notifier.runDueWork();
      }
      expect(slack.callsTo('chat.update').map((call) => call.params.channel)).toEqual(
        expect.arrayContaining([dmChannelOf(team, bob), dmChannelOf(team, carol)]),
      );
      expect(slack.callsTo('chat.update')).toHaveLength(2);
      expect(logger.entries).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          message: 'Slack message can no longer be updated: left as it is',
        }),
      );
    },
  );

  it('updates a copy after an answer and at the timeout though its recipient is no longer found by email', async () => {
    const world = await start();
    const { send, slack, clock, notifier } = world;
    const body = interactive([bob, carol]);
    const answered = (
      await send({ ...body, response_request: { ...body.response_request, timeout_minutes: 180 } })
    ).json.request_id as string;
    // An hour on, the cached user ids are stale, and bob's Slack profile names another address.
    clock.advance(61 * 60_000);
    slack.removeUser(team, slackIdOf(bob));
    slack.addUser(team, { id: slackIdOf(bob), email: 'robert@elsewhere.test' });
    await click(world, bob, 'approve');
    expect(await answerOf(notifier, answered, bob)).toBe('approve');
    expect(slack.messagesOf(team, slackIdOf(bob))[0]?.buttons).toEqual([]);
    // The request times out: carol's copy, whose address still finds her, and bob's both change.
    clock.advance(120 * 60_000);
    await notifier.runDueWork();
    expect(slack.messagesOf(team, slackIdOf(carol))[0]?.buttons).toEqual([]);
    expect(slack.callsTo('users.lookupByEmail').map((call) => call.params.email)).toEqual([bob, carol]);
  });

  it('keeps no record of an interactive message it delivers: its ref names the view and who may click', async () => {
    const { send, storage } = await start();
    const requestId = (await send(interactive([bob]))).json.request_id as string;
    const [copy] = await storage.deliveries.listDeliveries(requestId);
    const request = await storage.requests.getRequest(requestId);
    expect(copy?.ref).toEqual({
      channel: dmChannelOf(team, bob),
      ts: expect.any(String),
      v: String(request?.version),
      t: team,
      u: slackIdOf(bob),
    });
    expect(await storage.transportState.get(`slack:copy:${copy?.ref.channel}:${copy?.ref.ts}`)).toBeNull();
    expect(await storage.transportState.get(`slack:shown:${copy?.ref.channel}:${copy?.ref.ts}`)).toBeNull();
  });

  it('keeps the newest view of a message once it changed, until the retention (30 days) has passed after the longest a request lives', async () => {
    const world = await start();
    const { send, storage, clock } = world;
    const day = 24 * 60 * 60_000;
    const requestId = (await send(interactive([bob, carol]))).json.request_id as string;
    await click(world, bob, 'approve');
    const copies = await storage.deliveries.listDeliveries(requestId);
    const shown = (email: string) => {
      const copy = copies.find((each) => each.recipient === email);
      return storage.transportState.get(`slack:shown:${copy?.ref.channel}:${copy?.ref.ts}`);
    };
    const request = await storage.requests.getRequest(requestId);
    expect((await shown(bob))?.value).toBe(String(request?.version));
    // Carol's copy still shows the view it was delivered with.
    expect(await shown(carol)).toBeNull();
    clock.advance(31 * day - 60_000);
    expect(await shown(bob)).not.toBeNull();
    clock.advance(2 * 60_000);
    expect(await shown(bob)).toBeNull();
  });

  it('applies a click on a message of an earlier release by the record that release kept, and updates it', async () => {
    const world = await start();
    const { send, storage, slack } = world;
    const requestId = (await send(interactive([bob]))).json.request_id as string;
    const { channel, ts } = await asEarlierRelease(storage, requestId, bob, team);
    await click(world, bob, 'approve', { clicker: carol });
    expect(await answerOf(world.notifier, requestId, bob)).toBeNull();
    await click(world, bob, 'approve');
    expect(await answerOf(world.notifier, requestId, bob)).toBe('approve');
    expect(slack.messagesOf(team, slackIdOf(bob))[0]?.buttons).toEqual([]);
    const record = await storage.transportState.get(`slack:copy:${channel}:${ts}`);
    expect(JSON.parse(record?.value ?? '[]')[5]).toBe(
      (await storage.requests.getRequest(requestId))?.version,
    );
  });

  it('keeps the later of two clicks when Slack brings the earlier one last (a repeat of a click that timed out)', async () => {
    const world = await start();
    const { transport, clock } = world;
    const { requestId, clickAt } = await requestToBob(world);
    const approve = clickAt('approve', '1772355610.000100');
    const reject = clickAt('reject', '1772355612.000200');
    const nowSeconds = clock.now() / 1000;
    expect((await postInteraction(transport, reject, nowSeconds)).status).toBe(200);
    await transport.idle();
    expect(await answerOf(world.notifier, requestId, bob)).toBe('reject');
    // Slack's repeat of the earlier click, whose first attempt never arrived, comes now.
    expect((await postInteraction(transport, approve, nowSeconds)).status).toBe(200);
    await transport.idle();
    expect(await answerOf(world.notifier, requestId, bob)).toBe('reject');
    // A click after both still changes the answer.
    expect(
      (await postInteraction(transport, clickAt('approve', '1772355620.000001'), nowSeconds)).status,
    ).toBe(200);
    await transport.idle();
    expect(await answerOf(world.notifier, requestId, bob)).toBe('approve');
  });

  it('remembers the newest action in a form the release before orders right (it reads the action_ts alone)', async () => {
    const world = await start();
    const { transport, clock, storage } = world;
    const { message, clickAt } = await requestToBob(world);
    const body = clickAt('approve', '1772355610.000100');
    expect((await postInteraction(transport, body, clock.now() / 1000)).status).toBe(200);
    await transport.idle();
    const key = `slack:newest-action:${JSON.stringify([team, slackIdOf(bob), message.channel, message.ts])}`;
    const stored = (await storage.transportState.get(key))?.value ?? '';
    expect(stored).toBe('1772355610.000100~approve');
    // The release before compares an action, with this same function, against the whole record,
    // which it reads as an action_ts.
    const laterThanBefore = isLaterAction;
    expect(laterThanBefore('1772355610.000101', stored)).toBe(true);
    expect(laterThanBefore('1772355612.000000', stored)).toBe(true);
    expect(laterThanBefore('1772355610.000100', stored)).toBe(false);
    expect(laterThanBefore('1772355610.000099', stored)).toBe(false);
  });

  it('keeps the later of two clicks handled on two instances when the earlier one is written last', async () => {
    // Instance A reads the request of its click only once let go (a pause of its process, a slow
    // store), while instance B, on the same storage, takes the later click.
    const gate: { release?: () => void; holdNext: boolean } = { holdNext: false };
    const world = await start(
      {},
      {
        through: (storage) => ({
          ...storage,
          requests: {
            ...storage.requests,
            getRequest: async (id) => {
              if (gate.holdNext) {
                gate.holdNext = false;
                await new Promise<void>((resolve) => {
                  gate.release = resolve;
                });
              }
              return storage.requests.getRequest(id);
            },
          },
        }),
      },
    );
    const { slack, transport, clock } = world;
    const other = slackTransport({
      signingSecret: testSigningSecret,
      apiUrl: slack.apiUrl,
      installation: testInstallations,
      retry: fastRetry,
      clock,
    });
    const otherNotifier = createNotifier({ storage: world.storage, transports: [other], clock });
    try {
      const { requestId, clickAt } = await requestToBob(world);
      const nowSeconds = clock.now() / 1000;
      gate.holdNext = true;
      expect(
        (await postInteraction(transport, clickAt('approve', '1772355610.000100'), nowSeconds)).status,
      ).toBe(200);
      await vi.waitFor(() => expect(gate.release).toBeDefined());
      expect((await postInteraction(other, clickAt('reject', '1772355612.000200'), nowSeconds)).status).toBe(
        200,
      );
      await other.idle();
      expect(await answerOf(world.notifier, requestId, bob)).toBe('reject');
      gate.release?.();
      await transport.idle();
      expect(await answerOf(world.notifier, requestId, bob)).toBe('reject');
      expect(slack.messagesOf(team, slackIdOf(bob)).at(-1)?.footer).toContain('Reject');
    } finally {
      await otherNotifier.stop();
    }
  });

  it('applies a click Slack was answered for when the notifier stops right after, and answers clicks after the stop 503', async () => {
    const world = await start();
    const { send, slack, storage, transport, clock } = world;
    const requestId = (await send(interactive([bob, carol]))).json.request_id as string;
    // A store over the network (Redis, MongoDB) answers in milliseconds, not in a microtask: the
    // click is still on its way to the core when the stop begins.
    const listDeliveries = storage.deliveries.listDeliveries.bind(storage.deliveries);
    storage.deliveries.listDeliveries = async (id) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return listDeliveries(id);
    };
    const clickBody = (owner: string) => {
      const message = slack.messagesOf(team, slackIdOf(owner)).at(-1);
      if (!message) throw new Error(`${owner} has no message`);
      const { channel, ts } = message;
      return slack.clickBody({ teamId: team, userId: slackIdOf(owner), channel, ts, value: 'approve' });
    };
    const nowSeconds = clock.now() / 1000;
    expect((await postInteraction(transport, clickBody(bob), nowSeconds)).status).toBe(200);
    await world.notifier.stop();
    expect(await answerOf(world.notifier, requestId, bob)).toBe('approve');
    const late = await postInteraction(transport, clickBody(carol), nowSeconds);
    expect(late.status).toBe(503);
    expect(JSON.parse(late.body)).toEqual({ status: 'error', details: 'The service is shutting down' });
    expect(await answerOf(world.notifier, requestId, carol)).toBeNull();
  });

  it.each([
    ['delivered now', false],
    ['of an earlier release', true],
  ])('ignores a click on a message %s whose buttons name another request than its own', async (_, legacy) => {
    const world = await start();
    const { send, slack, logger, storage } = world;
    const other = (await send(interactive([bob, carol]))).json.request_id as string;
    const own = (await send(interactive([bob]))).json.request_id as string;
    if (legacy) await asEarlierRelease(storage, own, bob, team);
    // Bob's message of his own request, with buttons naming the other one, which he was sent too
    // (Slack signs what the message holds, so only a message built so could carry them).
    await click(world, bob, 'approve', { edit: (body) => body.replaceAll(own, other) });
    expect(await answerOf(world.notifier, own, bob)).toBeNull();
    expect(await answerOf(world.notifier, other, bob)).toBeNull();
    expect(slack.callsTo('chat.update')).toEqual([]);
    expect(logger.entries.map((entry) => entry.message)).toContain(
      'Slack click on a message this transport has no record of: ignored',
    );
  });

  /** Bob's copy of a new interactive request, and how to call `update` on it with a view of that request. */
  async function bobsCopy({ send, storage, transport }: World) {
    const requestId = (await send(interactive([bob]))).json.request_id as string;
    const [copy] = await storage.deliveries.listDeliveries(requestId);
    const request = await storage.requests.getRequest(requestId);
    if (!copy || !request) throw new Error('no copy delivered');
    const organization = { id: 'acme', name: 'Acme Inc' };
    return {
      request,
      update: (view: MessageView) =>
        transport.update({ organization, recipient: bob, message: view }, copy.ref),
    };
  }

  const bobsMessage = (slack: FakeSlack) => slack.messagesOf(team, slackIdOf(bob))[0];

  it('throws when an update fails, and applies it when tried again', async () => {
    const world = await start();
    const { request, update } = await bobsCopy(world);
    const finished = requestView(
      { ...request, version: request.version + 1, status: 'finished', finishedAt: 0 },
      bob,
    );

    world.slack.inject('chat.update', { kind: 'error', error: 'internal_error' });
    await expect(update(finished)).rejects.toThrow(/internal_error/);
    expect(bobsMessage(world.slack)?.buttons).toHaveLength(2);

    await update(finished);
    expect(bobsMessage(world.slack)?.buttons).toEqual([]);
    expect(bobsMessage(world.slack)?.footer).toMatch(/expired/);
  });

  it('throws when its view reached Slack after a newer one, and the newer view tried again is shown', async () => {
    const world = await start();
    const { slack } = world;
    const { request, update } = await bobsCopy(world);
    const older = requestView({ ...request, version: request.version + 1 }, bob);
    const newer = requestView(
      { ...request, version: request.version + 2, status: 'finished', finishedAt: 0 },
      bob,
    );
    const release = slack.hold('chat.update');
    const late = update(older);
    await vi.waitFor(() => expect(slack.callsTo('chat.update')).toHaveLength(1));
    await update(newer);
    expect(bobsMessage(slack)?.buttons).toEqual([]);
    release();
    await expect(late).rejects.toThrow(/a newer view was claimed/);
    // The older view landed last: Slack shows it until the core's refresh sends the current view.
    expect(bobsMessage(slack)?.buttons).toHaveLength(2);
    await update(newer);
    expect(bobsMessage(slack)?.buttons).toEqual([]);
    expect(bobsMessage(slack)?.updates).toBe(3);
  });
});

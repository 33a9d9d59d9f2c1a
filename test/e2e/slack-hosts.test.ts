import { afterEach, describe, expect, it } from 'vitest';
import type { LogFields, Logger } from '../../core/ports/logger.js';
import { type CallbackReceiver, startReceiver } from '../support/callback-receiver.js';
import { type SlackApp, type SlackHostKind, startSlackApp } from '../support/slack-app.js';
import { slackSignatureHeaders } from '../support/slack-signing.js';

const bob = 'bob@acme.test';
const carol = 'carol@acme.test';
const options = [
  { text: 'Approve', value: 'approve' },
  { text: 'Reject', value: 'reject' },
];
const minute = 60_000;

interface StatusBody {
  status: 'pending' | 'finished';
  responses: {
    user_email: string;
    option_value: string | null;
    timestamp: string | null;
    expired: boolean;
  }[];
}

function warnings(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (message: string, _fields?: LogFields) => {
    lines.push(message);
  };
  return { lines, debug() {}, info() {}, warn: keep, error: keep };
}

describe.each<SlackHostKind>(['express', 'koa'])('Slack end to end through the %s host', (kind) => {
  let app: SlackApp | undefined;
  let receiver: CallbackReceiver | undefined;

  afterEach(async () => {
    await app?.close();
    await receiver?.close();
    if (app) expect(app.slack.violations).toEqual([]);
    app = undefined;
    receiver = undefined;
  });

  const start = async (settings: Parameters<typeof startSlackApp>[1] = {}) => {
    app = await startSlackApp(kind, settings);
    return app;
  };

  const api = async (
    target: SlackApp,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: Record<string, unknown> }> => {
    const response = await fetch(`${target.baseUrl}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'x-api-key': target.keys.alice, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  const ask = async (target: SlackApp, recipients: string[], extra: Record<string, unknown> = {}) => {
    const answer = await api(target, '/api/notify', {
      user_emails: recipients,
      message: 'Deploy *v2* to production?',
      response_request: { options, timeout_minutes: 60, ...extra },
    });
    expect(answer.status).toBe(200);
    return answer.json.request_id as string;
  };

  const statusOf = async (target: SlackApp, requestId: string): Promise<StatusBody> => {
    const answer = await api(target, `/api/notify/status/${requestId}`);
    expect(answer.status).toBe(200);
    return answer.json as unknown as StatusBody;
  };

  const answerOf = async (target: SlackApp, requestId: string, email: string) =>
    (await statusOf(target, requestId)).responses.find((response) => response.user_email === email);

  it('delivers a plain message as a direct message with the mrkdwn of the text', async () => {
    const target = await start();
    const answer = await api(target, '/api/notify', {
      user_emails: [bob],
      message: 'Deploy *done*: see [log](https://ci.example.com/1?a=1&b=2)',
    });
    expect(answer.status).toBe(200);
    const [message] = target.messagesOf(bob);
    expect(message?.sections).toBe('Deploy *done*: see <https://ci.example.com/1?a=1&amp;b=2|log>');
    expect(message?.buttons).toEqual([]);
    expect(message?.footer).toBeNull();
  });

  it('takes a click on a message of 4,000 characters outside Latin script, whose payload is over 64 KiB', async () => {
    const target = await start();
    const message = '日本語のテキスト'.repeat(500);
    const answer = await api(target, '/api/notify', {
      user_emails: [bob],
      message,
      response_request: { options, timeout_minutes: 60 },
    });
    expect(answer.status).toBe(200);
    const click = await target.click({ owner: bob, value: 'approve' });
    expect(Buffer.byteLength(click.body)).toBeGreaterThan(64 * 1024);
    expect(click.status).toBe(200);
    await target.transport.idle();
    expect(await answerOf(target, answer.json.request_id as string, bob)).toMatchObject({
      option_value: 'approve',
    });
  });

  it('takes a click: 200 at once, then the status, the Slack message and the callback reflect it', async () => {
    const target = await start();
    receiver = await startReceiver();
    const requestId = await ask(target, [bob], { callback_url: receiver.url() });
    const [open] = target.messagesOf(bob);
    expect(open?.buttons.map(({ text, value }) => ({ text, value }))).toEqual(options);
    expect(open?.footer).toContain('Sent by Alice Doe');

    target.clock.advance(90_000);
    const click = await target.click({ owner: bob, value: 'approve' });
    expect(click.status).toBe(200);
    expect(click.text).toBe('');
    await target.transport.idle();

    expect(await statusOf(target, requestId)).toEqual({
      status: 'finished',
      responses: [
        { user_email: bob, option_value: 'approve', timestamp: '2026-03-01T09:01:30.000Z', expired: false },
      ],
    });
    const [answered] = target.messagesOf(bob);
    expect(answered?.ts).toBe(open?.ts);
    expect(answered?.buttons).toEqual([]);
    expect(answered?.footer).toContain('Approve');
    expect(target.slack.callsTo('chat.update').at(-1)?.params).toMatchObject({
      channel: open?.channel,
      ts: open?.ts,
    });

    await target.notifier.runDueWork();
    expect(receiver.received).toHaveLength(1);
    expect(JSON.parse(receiver.received[0]?.body ?? '{}')).toMatchObject({
      type: 'request.finished',
      request_id: requestId,
      responses: [{ user_email: bob, option_value: 'approve', expired: false }],
    });
  });

  it('refuses forged, stale, future and unsigned requests with 401 in the error shape, and changes nothing', async () => {
    const target = await start();
    const requestId = await ask(target, [bob]);
    const [message] = target.messagesOf(bob);
    const body = target.slack.clickBody({
      teamId: 'T0ACME',
      userId: 'UBOB',
      channel: message?.channel ?? '',
      ts: message?.ts ?? '',
      value: 'approve',
    });
    const nowSeconds = target.clock.now() / 1000;
    const attempts = [
      slackSignatureHeaders(body, nowSeconds, 'not-the-signing-secret'),
      slackSignatureHeaders(body, nowSeconds - 6 * 60),
      slackSignatureHeaders(body, nowSeconds + 6 * 60),
      { 'content-type': 'application/x-www-form-urlencoded' },
    ];
    for (const headers of attempts) {
      const answer = await target.post(body, headers);
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.text)).toEqual({ status: 'error', details: expect.any(String) });
    }
    const tampered = await target.post(
      body.replace('approve', 'reject'),
      slackSignatureHeaders(body, nowSeconds),
    );
    expect(tampered.status).toBe(401);
    await target.transport.idle();
    expect((await answerOf(target, requestId, bob))?.option_value).toBeNull();
    expect(target.slack.callsTo('chat.update')).toEqual([]);
  });

  it("ignores Slack's repeat of a click and a second click once the choice is final", async () => {
    const target = await start();
    const requestId = await ask(target, [bob, carol], { disable: 'onTimeout' });
    const first = await target.click({ owner: bob, value: 'approve' });
    await target.transport.idle();
    target.clock.advance(1000);
    await target.click({ owner: bob, value: 'reject' });
    await target.transport.idle();
    // Slack re-sends the first request (signed anew) as if it had not been answered.
    target.clock.advance(1000);
    const repeat = await target.post(first.body, {
      ...slackSignatureHeaders(first.body, target.clock.now() / 1000),
      'x-slack-retry-num': '1',
      'x-slack-retry-reason': 'http_timeout',
    });
    expect(repeat.status).toBe(200);
    await target.transport.idle();
    expect((await answerOf(target, requestId, bob))?.option_value).toBe('reject');

    const final = await ask(target, [carol]);
    await target.click({ owner: carol, index: 1, value: 'approve' });
    await target.click({ owner: carol, index: 1, value: 'reject' });
    await target.transport.idle();
    expect((await answerOf(target, final, carol))?.option_value).toBe('approve');
  });

  it("refuses a click by another Slack user, or from another workspace, on a recipient's message", async () => {
    const logger = warnings();
    const target = await start({ logger });
    const requestId = await ask(target, [bob, carol]);
    const byCarol = await target.click({ owner: bob, value: 'approve', clicker: carol });
    expect(byCarol.status).toBe(200);
    const elsewhere = await target.click({ owner: bob, value: 'approve', teamId: 'T0GLOBEX' });
    expect(elsewhere.status).toBe(200);
    await target.transport.idle();
    const status = await statusOf(target, requestId);
    expect(status.responses.map((response) => response.option_value)).toEqual([null, null]);
    expect(target.messagesOf(bob)[0]?.buttons).toHaveLength(2);
    expect(logger.lines.filter((line) => line.includes('other than the recipient'))).toHaveLength(2);
  });

  it('fails loudly (500 in the error shape) when a body parser ran before the router', async () => {
    const target = await start({ bodyParserFirst: true });
    const body = 'payload=%7B%7D';
    const answer = await target.post(body, slackSignatureHeaders(body, target.clock.now() / 1000));
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.text)).toEqual({
      status: 'error',
      details: expect.stringMatching(/body parser/),
    });
  });

  it('updates every copy at expiry: no buttons, the answer or "expired" shown', async () => {
    const target = await start();
    const requestId = await ask(target, [bob, carol]);
    await target.click({ owner: bob, value: 'approve' });
    await target.transport.idle();
    target.clock.advance(60 * minute);
    await target.notifier.runDueWork();
    expect((await statusOf(target, requestId)).status).toBe('finished');
    const [bobs] = target.messagesOf(bob);
    const [carols] = target.messagesOf(carol);
    expect(bobs?.buttons).toEqual([]);
    expect(bobs?.footer).toContain('Approve');
    expect(carols?.buttons).toEqual([]);
    expect(carols?.footer).toMatch(/expired/);
  });

  it("waits out Slack's 429 and delivers", async () => {
    const target = await start();
    target.slack.inject('chat.postMessage', { kind: 'rate-limited', retryAfterSeconds: 1 });
    await ask(target, [bob]);
    expect(target.slack.callsTo('chat.postMessage')).toHaveLength(2);
    expect(target.messagesOf(bob)).toHaveLength(1);
  });

  it('reaches a user on Slack and in the inbox at once; an answer on either counts and updates both', async () => {
    const target = await start({ inbox: true });
    const inboxOf = async (email: string) => {
      const response = await fetch(`${target.baseUrl}/inbox/api/messages?email=${encodeURIComponent(email)}`);
      return (await response.json()) as {
        id: string;
        buttons: { disabled: boolean }[];
        selected: string | null;
      }[];
    };

    const answeredInInbox = await ask(target, [bob]);
    const [inboxCopy] = await inboxOf(bob);
    expect(target.messagesOf(bob)[0]?.buttons).toHaveLength(2);
    const inboxClick = await fetch(`${target.baseUrl}/inbox/api/messages/${inboxCopy?.id}/click`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ value: 'reject' }),
    });
    expect(inboxClick.status).toBe(200);
    expect((await answerOf(target, answeredInInbox, bob))?.option_value).toBe('reject');
    expect(target.messagesOf(bob)[0]?.buttons).toEqual([]);
    expect(target.messagesOf(bob)[0]?.footer).toContain('Reject');

    const answeredOnSlack = await ask(target, [bob]);
    await target.click({ owner: bob, index: 1, value: 'approve' });
    await target.transport.idle();
    expect((await answerOf(target, answeredOnSlack, bob))?.option_value).toBe('approve');
    const [, second] = await inboxOf(bob);
    expect(second?.selected).toBe('approve');
    expect(second?.buttons.every((button) => button.disabled)).toBe(true);
  });

  it('still reaches through the inbox a user who is not on Slack', async () => {
    const target = await start({ inbox: true });
    target.slack.removeUser('T0ACME', 'UDAVE');
    const answer = await api(target, '/api/notify', { user_emails: ['dave@acme.test'], message: 'Hi' });
    expect(answer.status).toBe(200);
    expect(target.messagesOf('dave@acme.test')).toEqual([]);
    const inbox = await fetch(`${target.baseUrl}/inbox/api/messages?email=dave%40acme.test`);
    expect(await inbox.json()).toHaveLength(1);
  });
});

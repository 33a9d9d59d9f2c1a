import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeSlack, startFakeSlack } from '../support/fake-slack.js';
import { slackSignatureHeaders, testSigningSecret } from '../support/slack-signing.js';
import { acmeWorkspace, slackIdOf } from '../support/slack-workspace.js';
import { type StandaloneProcess, startStandaloneProcess } from '../support/standalone-process.js';

const apiKey = 'cnk_slack_standalone_alice_000000000001';
const bob = 'bob@acme.test';
const team = acmeWorkspace().teamId;

/** A seed whose organization names its Slack workspace, as docs/slack.md describes. */
const seed = {
  organizations: [
    {
      id: 'acme',
      name: 'Acme Inc',
      slack: { teamId: team, botToken: acmeWorkspace().botToken },
      users: [
        {
          email: 'alice@acme.test',
          name: 'Alice Doe',
          role: 'admin',
          apiKeys: [{ label: 'e2e', key: apiKey }],
        },
        { email: bob, name: 'Bob Roe', role: 'member' },
      ],
    },
  ],
};

describe('Slack through the standalone host', () => {
  let slack: FakeSlack;
  let directory: string;
  let seedPath: string;
  let service: StandaloneProcess | undefined;

  beforeAll(async () => {
    slack = await startFakeSlack([acmeWorkspace()]);
    directory = await mkdtemp(join(tmpdir(), 'chat-notify-slack-'));
    seedPath = join(directory, 'seed.json');
    await writeFile(seedPath, JSON.stringify(seed));
  });

  afterEach(async () => {
    await service?.stop();
    service = undefined;
  });

  afterAll(async () => {
    expect(slack.violations).toEqual([]);
    await slack.close();
    await rm(directory, { recursive: true, force: true });
  });

  const start = async (environment: Record<string, string> = {}) => {
    service = await startStandaloneProcess({
      NOTIFY_SEED: seedPath,
      SLACK_SIGNING_SECRET: testSigningSecret,
      SLACK_API_URL: slack.apiUrl,
      ...environment,
    });
    return service;
  };

  const send = async (base: string, body: unknown) => {
    const response = await fetch(`${base}/api/notify`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  const answerOf = async (base: string, requestId: string) => {
    const response = await fetch(`${base}/api/notify/status/${requestId}`, {
      headers: { 'x-api-key': apiKey },
    });
    const status = (await response.json()) as { responses: { option_value: string | null }[] };
    return status.responses[0]?.option_value;
  };

  const messagesOfBob = () => slack.messagesOf(team, slackIdOf(bob));

  it('delivers plain and interactive messages on Slack, takes a signed click, and refuses a forged one', async () => {
    const { base } = await start();
    expect((await send(base, { user_emails: [bob], message: 'Deploy *done*' })).status).toBe(200);
    const asked = await send(base, {
      user_emails: [bob],
      message: 'Deploy *v2*?',
      response_request: {
        options: [
          { text: 'Approve', value: 'approve' },
          { text: 'Reject', value: 'reject' },
        ],
        timeout_minutes: 5,
      },
    });
    expect(asked.status).toBe(200);
    const requestId = asked.json.request_id as string;
    const [plain, interactive] = messagesOfBob();
    expect(plain?.sections).toBe('Deploy *done*');
    expect(interactive?.buttons.map((button) => button.value)).toEqual(['approve', 'reject']);

    const body = slack.clickBody({
      teamId: team,
      userId: slackIdOf(bob),
      channel: interactive?.channel ?? '',
      ts: interactive?.ts ?? '',
      value: 'approve',
    });
    const url = `${base}/slack/interactivity`;
    const forged = await fetch(url, {
      method: 'POST',
      headers: slackSignatureHeaders(body, Date.now() / 1000, 'forged-secret'),
      body,
    });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toEqual({ status: 'error', details: 'Invalid Slack signature' });

    const signed = await fetch(url, {
      method: 'POST',
      headers: slackSignatureHeaders(body, Date.now() / 1000),
      body,
    });
    expect(signed.status).toBe(200);
    await expect.poll(() => answerOf(base, requestId)).toBe('approve');
    await expect.poll(() => messagesOfBob()[1]?.buttons.length).toBe(0);
    expect(messagesOfBob()[1]?.footer).toContain('Approve');
  });

  it('turns the inbox off once Slack is configured, unless NOTIFY_INBOX=1 keeps it on', async () => {
    const slackOnly = await start();
    expect((await fetch(`${slackOnly.base}/inbox/api/messages?email=${bob}`)).status).toBe(404);
    await service?.stop();

    const both = await start({ NOTIFY_INBOX: '1' });
    const before = messagesOfBob().length;
    expect((await send(both.base, { user_emails: [bob], message: 'Twice' })).status).toBe(200);
    expect(messagesOfBob()).toHaveLength(before + 1);
    const inbox = await fetch(`${both.base}/inbox/api/messages?email=${bob}`);
    expect(inbox.status).toBe(200);
    expect(await inbox.json()).toHaveLength(1);
  });
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FakeBotConnector,
  type FakeTeamsUser,
  startFakeBotConnector,
} from '../support/fake-bot-connector.js';
import { type LocalOpenIdAuthority, startLocalOpenIdAuthority } from '../support/local-openid-authority.js';
import { type StandaloneProcess, startStandaloneProcess } from '../support/standalone-process.js';

const appId = '00000000-0000-4000-8000-00000000a5a1';
const appPassword = 'standalone-test-secret';
const appTenantId = '11111111-1111-4111-8111-111111111111';
const acmeTenant = '66666666-6666-4666-8666-666666666666';
const apiKey = 'cnk_teams_standalone_alice_000000000001';
const teamsBob: FakeTeamsUser = {
  id: '29:bob',
  aadObjectId: 'aad-bob',
  name: 'Bob Roe',
  email: 'bob@acme.test',
  tenantId: acmeTenant,
};

/** A seed whose organization names its Microsoft 365 tenant, as docs/teams.md describes. */
const seed = {
  organizations: [
    {
      id: 'acme',
      name: 'Acme Inc',
      teams: { tenantId: acmeTenant },
      users: [
        {
          email: 'alice@acme.test',
          name: 'Alice Doe',
          role: 'admin',
          apiKeys: [{ label: 'e2e', key: apiKey }],
        },
        { email: teamsBob.email, name: 'Bob Roe', role: 'member' },
      ],
    },
  ],
};

/**
 * The standalone host configured only by its TEAMS_* settings and the seed, with every Microsoft
 * endpoint pointed at local servers (the authority that issues and verifies tokens, and the Bot
 * Connector), as an operator would for a test environment.
 */
describe('Microsoft Teams through the standalone host', () => {
  let authority: LocalOpenIdAuthority;
  let connector: FakeBotConnector;
  let directory: string;
  let service: StandaloneProcess;

  beforeAll(async () => {
    authority = await startLocalOpenIdAuthority({ tenantId: appTenantId, clients: { [appId]: appPassword } });
    connector = await startFakeBotConnector({
      appId,
      acceptToken: (token) => authority.issued(token),
      users: [teamsBob],
    });
    directory = await mkdtemp(join(tmpdir(), 'chat-notify-teams-'));
    const seedPath = join(directory, 'seed.json');
    await writeFile(seedPath, JSON.stringify(seed));
    service = await startStandaloneProcess({
      NOTIFY_SEED: seedPath,
      TEAMS_APP_ID: appId,
      TEAMS_APP_PASSWORD: appPassword,
      TEAMS_TENANT_ID: appTenantId,
      TEAMS_AUTHORITY: authority.authority,
      TEAMS_TOKEN_ENDPOINT: authority.tokenEndpoint,
    });
  });

  afterAll(async () => {
    await service?.stop();
    expect(connector.violations).toEqual([]);
    await Promise.all([connector.close(), authority.close()]);
    await rm(directory, { recursive: true, force: true });
  });

  const postActivity = (activity: unknown, authorization: string) =>
    fetch(`${service.base}/teams/messages`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify(activity),
    });
  const signed = () =>
    `Bearer ${authority.activityToken({ audience: appId, serviceUrl: connector.serviceUrl })}`;

  it('turns Teams on (and the inbox off) from its settings alone', () => {
    expect(service.lines.find((line) => line.message === 'chat platforms')?.platforms).toEqual(['teams']);
  });

  it('refuses an unsigned activity with 401 in the error shape', async () => {
    const [installation] = connector.installActivities(teamsBob.id);
    const response = await postActivity(installation, '');
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ status: 'error', details: expect.any(String) });
  });

  it('links a user on install, delivers a card to them and takes their answer', async () => {
    for (const activity of connector.installActivities(teamsBob.id)) {
      expect((await postActivity(activity, signed())).status).toBe(200);
    }
    const sent = await fetch(`${service.base}/api/notify`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({
        user_emails: [teamsBob.email],
        message: 'Deploy *v2*?',
        response_request: {
          options: [
            { text: 'Approve', value: 'approve' },
            { text: 'Reject', value: 'reject' },
          ],
          timeout_minutes: 30,
        },
      }),
    });
    expect(sent.status).toBe(200);
    const { request_id: requestId } = (await sent.json()) as { request_id: string };
    const [card] = connector.messagesOf(teamsBob.id);
    expect(card?.buttons.map((button) => button.value)).toEqual(['approve', 'reject']);

    const click = await postActivity(connector.clickActivity(card!, 'approve'), signed());
    expect(click.status).toBe(200);
    const status = await fetch(`${service.base}/api/notify/status/${requestId}`, {
      headers: { 'x-api-key': apiKey },
    });
    expect(await status.json()).toMatchObject({
      status: 'finished',
      responses: [{ user_email: teamsBob.email, option_value: 'approve', expired: false }],
    });
  });
});

import { describe, expect, it } from 'vitest';
import type { LogFields, Logger } from '../../core/ports/logger.js';
import { chatTransports } from '../../examples/standalone/chat-transports.js';

const seed = {
  organizations: [
    { id: 'acme', name: 'Acme', slack: { teamId: 'T0ACME', botToken: 'xoxb-acme' }, users: [] },
    { id: 'globex', name: 'Globex', users: [] },
  ],
};

function logger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return {
    warnings,
    debug() {},
    info() {},
    warn(message: string, _fields?: LogFields) {
      warnings.push(message);
    },
    error() {},
  };
}

const platforms = async (settings: Parameters<typeof chatTransports>[0], from: unknown = seed) =>
  (await chatTransports(settings, from, logger())).map((transport) => transport.platform);

describe('chat transports of the standalone host (README.md#the-standalone-service, docs/slack.md)', () => {
  it('uses the inbox alone when no other platform is configured', async () => {
    expect(await platforms({})).toEqual(['inbox']);
  });

  it('uses Slack alone once SLACK_SIGNING_SECRET is set', async () => {
    expect(await platforms({ SLACK_SIGNING_SECRET: 'secret' })).toEqual(['slack']);
  });

  it('lets NOTIFY_INBOX force the inbox on beside Slack, or off', async () => {
    expect(await platforms({ SLACK_SIGNING_SECRET: 'secret', NOTIFY_INBOX: true })).toEqual([
      'slack',
      'inbox',
    ]);
    expect(await platforms({ SLACK_SIGNING_SECRET: 'secret', NOTIFY_INBOX: false })).toEqual(['slack']);
  });

  it('refuses to start with no platform at all (NOTIFY_INBOX=0 and neither Slack nor Teams)', async () => {
    await expect(platforms({ NOTIFY_INBOX: false })).rejects.toThrow(
      /No chat platform is on: NOTIFY_INBOX=0 .* every send would fail/,
    );
  });

  it('refuses a seed whose Slack installation is malformed', async () => {
    const broken = { organizations: [{ id: 'acme', slack: { teamId: 'T0ACME' } }] };
    await expect(platforms({ SLACK_SIGNING_SECRET: 'secret' }, broken)).rejects.toThrow(/Invalid seed/);
  });

  it('warns when Slack is on but no organization has an installation', async () => {
    const log = logger();
    await chatTransports({ SLACK_SIGNING_SECRET: 'secret' }, { organizations: [{ id: 'globex' }] }, log);
    expect(log.warnings).toEqual([
      expect.stringContaining('no organization of the seed has a "slack" installation'),
    ]);
  });
});

describe('settings of a platform that is off', () => {
  it('are named in a warning, with the setting that would turn it on', async () => {
    const log = logger();
    const transports = await chatTransports(
      { SLACK_API_URL: 'http://127.0.0.1:1/api/', TEAMS_APP_PASSWORD: 'pw', TEAMS_TENANT_ID: 'tid' },
      {
        organizations: [
          { id: 'acme', slack: { teamId: 'T0ACME', botToken: 'xoxb-acme' }, teams: { tenantId: 't' } },
        ],
      },
      log,
    );
    expect(transports.map((transport) => transport.platform)).toEqual(['inbox']);
    expect(log.warnings).toEqual([
      `Slack is off (no SLACK_SIGNING_SECRET): ignoring SLACK_API_URL, the seed's "slack" entries`,
      `Teams is off (no TEAMS_APP_ID): ignoring TEAMS_APP_PASSWORD, TEAMS_TENANT_ID, the seed's "teams" entries`,
    ]);
  });

  it('are not there when nothing belongs to a platform that is off', async () => {
    const log = logger();
    await chatTransports({}, { organizations: [{ id: 'globex' }] }, log);
    expect(log.warnings).toEqual([]);
  });
});

import { z } from 'zod';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import type { SlackInstallation } from '../../adapters/chat/slack/index.js';
import type { ChatTransport, Logger } from '../../core/index.js';

/** The settings that choose the chat platforms (README.md#the-standalone-service, docs/slack.md), as read from the environment. */
export interface ChatPlatformSettings {
  /** Turns Slack on: the signing secret of the Slack app. */
  SLACK_SIGNING_SECRET?: string | undefined;
  /** Where the Slack Web API is called; Slack's own by default. */
  SLACK_API_URL?: string | undefined;
  /** Turns Microsoft Teams on: the bot's Microsoft App ID. */
  TEAMS_APP_ID?: string | undefined;
  /** The client secret of the bot's app registration. */
  TEAMS_APP_PASSWORD?: string | undefined;
  /** The tenant of the bot's app registration. */
  TEAMS_TENANT_ID?: string | undefined;
  /** Microsoft Entra's authority (a local server in tests). */
  TEAMS_AUTHORITY?: string | undefined;
  /** An OAuth token endpoint for the bot's own tokens, instead of the SDK's MSAL client. */
  TEAMS_TOKEN_ENDPOINT?: string | undefined;
  /** Forces the local inbox on (true) or off (false); unset, it is on only when no other platform is. */
  NOTIFY_INBOX?: boolean | undefined;
  /** Host names the inbox answers besides localhost and IP addresses, or true for any. */
  NOTIFY_INBOX_HOSTS?: string[] | true | undefined;
  /** The address the service listens on: a host name there is one the inbox answers. */
  HOST?: string | undefined;
  /** Variables named like settings that the service does not read (most likely misspelled). */
  unreadVariables?: readonly string[] | undefined;
}

/**
 * The local inbox, answering the names of `NOTIFY_INBOX_HOSTS`, and `HOST` when it is a name rather
 * than an address, since the service's log gives the inbox's address with it.
 */
function inboxOfSettings(settings: ChatPlatformSettings): ChatTransport {
  const named = settings.NOTIFY_INBOX_HOSTS ?? [];
  const host = settings.HOST ?? '';
  const isName = /^[a-z0-9._-]*[a-z][a-z0-9._-]*$/i.test(host);
  if (named !== true && isName) {
    try {
      return inboxTransport({ allowedHosts: [...named, host] });
    } catch {
      // A HOST the inbox takes for no name is left out: listening on it will say what is wrong.
    }
  }
  try {
    return inboxTransport({ allowedHosts: named });
  } catch (error) {
    // The inbox's own rule for names: what it refuses, the setting is refused for.
    throw new Error(`Invalid environment: NOTIFY_INBOX_HOSTS: ${(error as Error).message}`);
  }
}

/**
 * A platform's adapter, loaded with its SDK, an optional peer dependency of the package: an error
 * naming the setting that turned the platform on and what to install, when the SDK is not installed
 * (an application that installed the package and runs its executable).
 */
export async function platformAdapter<T>(
  setting: string,
  sdks: readonly string[],
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    const missing = sdks.some((sdk) => String(message).includes(`'${sdk}'`));
    if (code !== 'ERR_MODULE_NOT_FOUND' || !missing) throw error;
    throw new Error(`${setting} is set, but its SDK is not installed: npm install ${sdks.join(' ')}`, {
      cause: error,
    });
  }
}

/** The installations a seed names: `"slack": {"teamId": "T…", "botToken": "xoxb-…"}` beside `"users"`. */
const seedInstallationsSchema = z.object({
  organizations: z.array(
    z.object({
      id: z.string(),
      slack: z.object({ teamId: z.string().min(1), botToken: z.string().min(1) }).optional(),
    }),
  ),
});

/** The tenants a seed names: `"teams": {"tenantId": "…"}` beside `"users"`. */
const seedTenantsSchema = z.object({
  organizations: z.array(
    z.object({ id: z.string(), teams: z.object({ tenantId: z.string().min(1) }).optional() }),
  ),
});

/** Whether any organization of a seed names an entry for a platform (`"slack"`, `"teams"`). */
function seedNames(seed: unknown, platform: 'slack' | 'teams'): boolean {
  const organizations = (seed as { organizations?: unknown } | null)?.organizations;
  return (
    Array.isArray(organizations) &&
    organizations.some(
      (organization) => (organization as Record<string, unknown> | null)?.[platform] !== undefined,
    )
  );
}

/**
 * Warns of what the settings name that is not read: a variable named like a setting that is none
 * (a misspelled name leaves the setting at its default), and what belongs to a platform that is off:
 * a setting that would be read if it were on, or a seed entry of it. Most often the setting that
 * turns it on is missing, and the operator would wonder why nobody is reached there.
 */
function warnOfUnused(settings: ChatPlatformSettings, seed: unknown, logger: Logger): void {
  for (const name of settings.unreadVariables ?? []) {
    logger.warn(`${name} is no setting of the service: ignoring it (misspelled?)`);
  }
  const platforms = [
    { name: 'Slack', on: 'SLACK_SIGNING_SECRET', platform: 'slack', settings: ['SLACK_API_URL'] },
    {
      name: 'Teams',
      on: 'TEAMS_APP_ID',
      platform: 'teams',
      settings: ['TEAMS_APP_PASSWORD', 'TEAMS_TENANT_ID', 'TEAMS_AUTHORITY', 'TEAMS_TOKEN_ENDPOINT'],
    },
  ] as const;
  for (const { name, on, platform, settings: read } of platforms) {
    if (settings[on]) continue;
    const unused: string[] = read.filter((setting) => settings[setting] !== undefined);
    if (seedNames(seed, platform)) unused.push(`the seed's "${platform}" entries`);
    if (unused.length > 0) {
      logger.warn(`${name} is off (no ${on}): ignoring ${unused.join(', ')}`);
    }
  }
}

/** The Teams transport of the settings, or null when `TEAMS_APP_ID` is not set. */
async function teamsFromSettings(
  settings: ChatPlatformSettings,
  seed: unknown,
  logger: Logger,
): Promise<ChatTransport | null> {
  if (!settings.TEAMS_APP_ID) return null;
  const { TEAMS_APP_ID: appId, TEAMS_APP_PASSWORD: appPassword, TEAMS_TENANT_ID: appTenantId } = settings;
  if (!appPassword || !appTenantId) {
    throw new Error('TEAMS_APP_ID is set: TEAMS_APP_PASSWORD and TEAMS_TENANT_ID are needed too');
  }
  const parsed = seedTenantsSchema.safeParse(seed);
  if (!parsed.success) throw new Error(`Invalid seed: ${z.prettifyError(parsed.error)}`);
  const tenants: Record<string, string> = {};
  for (const organization of parsed.data.organizations) {
    if (organization.teams) tenants[organization.id] = organization.teams.tenantId;
  }
  if (Object.keys(tenants).length === 0) {
    logger.warn(
      'Teams is on, but no organization of the seed has a "teams" tenant: nobody is reached on Teams',
    );
  }
  const { clientCredentialsTokenProvider, fixedTeamsTenants, teamsTransport } = await platformAdapter(
    'TEAMS_APP_ID',
    ['@microsoft/agents-hosting', '@microsoft/agents-activity'],
    () => import('../../adapters/chat/teams/index.js'),
  );
  return teamsTransport({
    appId,
    appPassword,
    appTenantId,
    tenants: fixedTeamsTenants(tenants),
    ...(settings.TEAMS_AUTHORITY ? { authority: settings.TEAMS_AUTHORITY } : {}),
    ...(settings.TEAMS_TOKEN_ENDPOINT
      ? {
          tokenProvider: clientCredentialsTokenProvider({
            tokenEndpoint: settings.TEAMS_TOKEN_ENDPOINT,
            clientId: appId,
            clientSecret: appPassword,
          }),
        }
      : {}),
    logger,
  });
}

/**
 * The chat transports of the standalone host: Slack when `SLACK_SIGNING_SECRET` is set, with each
 * organization's workspace from the seed; Teams when `TEAMS_APP_ID` is set, with each organization's
 * tenant from the seed; the local inbox when `NOTIFY_INBOX` says so, or, without it, when no other
 * platform is configured. Each platform's adapter, and with it its SDK (an optional peer
 * dependency), is loaded only when that platform is on.
 *
 * @throws Error when the seed's `slack` or `teams` entries are malformed, Teams lacks a setting, or no
 *   platform is on (`NOTIFY_INBOX=0` alone).
 */
export async function chatTransports(
  settings: ChatPlatformSettings,
  seed: unknown,
  logger: Logger,
): Promise<ChatTransport[]> {
  const transports: ChatTransport[] = [];
  warnOfUnused(settings, seed, logger);
  if (settings.SLACK_SIGNING_SECRET) {
    const parsed = seedInstallationsSchema.safeParse(seed);
    if (!parsed.success) throw new Error(`Invalid seed: ${z.prettifyError(parsed.error)}`);
    const installations = new Map<string, SlackInstallation>();
    for (const organization of parsed.data.organizations) {
      if (organization.slack) installations.set(organization.id, organization.slack);
    }
    if (installations.size === 0) {
      logger.warn(
        'Slack is on, but no organization of the seed has a "slack" installation: nobody is reached on Slack',
      );
    }
    const { slackTransport } = await platformAdapter(
      'SLACK_SIGNING_SECRET',
      ['@slack/web-api'],
      () => import('../../adapters/chat/slack/index.js'),
    );
    transports.push(
      slackTransport({
        signingSecret: settings.SLACK_SIGNING_SECRET,
        ...(settings.SLACK_API_URL ? { apiUrl: settings.SLACK_API_URL } : {}),
        installation: (organizationId) => installations.get(organizationId) ?? null,
        logger,
      }),
    );
  }
  const teams = await teamsFromSettings(settings, seed, logger);
  if (teams) transports.push(teams);
  if (settings.NOTIFY_INBOX ?? transports.length === 0) {
    transports.push(inboxOfSettings(settings));
  } else if (settings.NOTIFY_INBOX_HOSTS !== undefined) {
    logger.warn(
      `The local inbox is off (${settings.NOTIFY_INBOX === false ? 'NOTIFY_INBOX=0' : 'another platform is on; NOTIFY_INBOX=1 keeps it'}): ignoring NOTIFY_INBOX_HOSTS`,
    );
  }
  if (transports.length === 0) {
    throw new Error(
      'No chat platform is on: NOTIFY_INBOX=0 turns the local inbox off, and neither Slack (SLACK_SIGNING_SECRET) nor Teams (TEAMS_APP_ID) is set; every send would fail',
    );
  }
  logger.info('chat platforms', { platforms: transports.map((transport) => transport.platform) });
  return transports;
}

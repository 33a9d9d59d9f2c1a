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
  /** Forces the local inbox on (true) or off (false); unset, it is on only when no other platform is. */
  NOTIFY_INBOX?: boolean | undefined;
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

/**
 * The chat transports of the standalone host: Slack when `SLACK_SIGNING_SECRET` is set, with each
 * organization's workspace from the seed; the local inbox when `NOTIFY_INBOX` says so, or, without
 * it, when no other platform is configured. The Slack adapter, and with it `@slack/web-api` (an
 * optional peer dependency), is loaded only when Slack is on.
 *
 * @throws Error when the seed's `slack` entries are malformed.
 */
export async function chatTransports(
  settings: ChatPlatformSettings,
  seed: unknown,
  logger: Logger,
): Promise<ChatTransport[]> {
  const transports: ChatTransport[] = [];
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
    const { slackTransport } = await import('../../adapters/chat/slack/index.js');
    transports.push(
      slackTransport({
        signingSecret: settings.SLACK_SIGNING_SECRET,
        ...(settings.SLACK_API_URL ? { apiUrl: settings.SLACK_API_URL } : {}),
        installation: (organizationId) => installations.get(organizationId) ?? null,
        logger,
      }),
    );
  }
  if (settings.NOTIFY_INBOX ?? transports.length === 0) transports.push(inboxTransport());
  logger.info('chat platforms', { platforms: transports.map((transport) => transport.platform) });
  return transports;
}

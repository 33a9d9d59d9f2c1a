/**
 * The notifiers the in-process benchmarks measure: the given storage and the local inbox, memory
 * storage and Slack against a fake Web API, or the given storage and Teams against a fake Bot
 * Connector; limits that never refuse (the benchmarks measure work,
 * not the limiter's answers) and the test seed's organizations, users and keys.
 */
import { inboxTransport } from '../adapters/chat/inbox/index.js';
import { slackTransport } from '../adapters/chat/slack/index.js';
import { fixedTeamsTenants, teamsTransport } from '../adapters/chat/teams/index.js';
import { memoryStorage } from '../adapters/storage/memory/index.js';
import { createNotifier, type Notifier, type NotifierOptions } from '../core/notifier.js';
import type { StoragePorts } from '../core/ports/storage.js';
import { startFakeBotConnector } from '../test/support/fake-bot-connector.js';
import { startLocalOpenIdAuthority } from '../test/support/local-openid-authority.js';
import { type FakeSlackProcess, startFakeSlackProcess } from '../test/support/slack-fake-process.js';
import { slackIdOf } from '../test/support/slack-workspace.js';
import { testSeed } from '../test/support/test-seed.js';

const unlimited = { burst: 1e12, perSecond: 1e12 };

/**
 * What a benchmark may set beyond the storage: its clock (the inbox's too), retention, scheduler, and
 * a callback transport.
 */
export type BenchNotifierOptions = Pick<NotifierOptions, 'clock' | 'retention' | 'scheduler' | 'callbacks'>;

/** Where a benchmark takes the notifier and the inbox from: the sources, or the built package. */
export interface BenchLibrary {
  createNotifier: typeof createNotifier;
  inboxTransport: typeof inboxTransport;
}

/** A seeded notifier on `storage`, delivering to the inbox, made by `library` (the sources by default). */
export async function benchNotifier(
  storage: StoragePorts,
  options: BenchNotifierOptions = {},
  library: BenchLibrary = { createNotifier, inboxTransport },
): Promise<Notifier> {
  const notifier = library.createNotifier({
    storage,
    transports: [library.inboxTransport(options.clock ? { clock: options.clock } : {})],
    rateLimits: { perKey: unlimited, perOrganization: unlimited },
    ...options,
  });
  await notifier.seed(testSeed);
  return notifier;
}

/**
 * A seeded notifier on `storage` (memory by default) delivering to Slack only, against a fake Slack
 * Web API in a process of its own (standing in for Slack's servers) whose workspace has a user for
 * each of `emails`; limits that never refuse. The caller stops both.
 */
export async function benchSlackNotifier(
  emails: readonly string[],
  storage: StoragePorts = memoryStorage(),
): Promise<{ notifier: Notifier; slack: FakeSlackProcess }> {
  const workspace = {
    teamId: 'T0ACME',
    botToken: 'xoxb-acme-bench',
    users: emails.map((email) => ({ id: slackIdOf(email), email })),
  };
  const slack = await startFakeSlackProcess([workspace]);
  const notifier = createNotifier({
    storage,
    transports: [
      slackTransport({
        signingSecret: 'bench-signing-secret',
        apiUrl: slack.apiUrl,
        installation: () => ({ teamId: workspace.teamId, botToken: workspace.botToken }),
      }),
    ],
    rateLimits: { perKey: unlimited, perOrganization: unlimited },
  });
  await notifier.seed(testSeed);
  return { notifier, slack };
}

/** A notifier delivering to Teams only, with the recipients it can reach; `close` stops it and its fakes. */
export interface BenchTeamsNotifier {
  notifier: Notifier;
  /** Addresses of Teams users who installed the app, each with a 1:1 conversation of their own. */
  emails: string[];
  close(): Promise<void>;
}

/**
 * A notifier on `storage` delivering to Teams only, against a fake Bot Connector and a local OpenID
 * authority in process (standing in for Microsoft's servers), with `users` Teams users who
 * installed the app, each with an id as long as Teams gives (`29:` and 80 characters), seeded as
 * members of the test seed's first organization beside its admin and her key; limits that never
 * refuse.
 */
export async function benchTeamsNotifier(storage: StoragePorts, users: number): Promise<BenchTeamsNotifier> {
  const appId = '00000000-0000-4000-8000-0000000b0001';
  const appTenantId = '11111111-1111-4111-8111-111111111111';
  const tenantId = '33333333-3333-4333-8333-333333333333';
  const token = 'bench-outbound-token';
  const members = Array.from({ length: users }, (_, index) => {
    const name = `teams${String(index).padStart(6, '0')}`;
    const aadObjectId = `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`;
    return { id: `29:1${name.padEnd(80, 'x')}`, aadObjectId, name, email: `${name}@acme.test`, tenantId };
  });
  const authority = await startLocalOpenIdAuthority({ tenantId: appTenantId });
  const connector = await startFakeBotConnector({
    appId,
    acceptToken: (presented) => presented === token,
    users: members,
  });
  const transport = teamsTransport({
    appId,
    appTenantId,
    authority: authority.authority,
    tenants: fixedTeamsTenants({ acme: tenantId }),
    tokenProvider: { getAccessToken: async () => token },
  });
  const notifier = createNotifier({
    storage,
    transports: [transport],
    rateLimits: { perKey: unlimited, perOrganization: unlimited },
  });
  const [acme] = testSeed.organizations;
  if (!acme) throw new Error('the test seed has no organization');
  await notifier.seed({
    organizations: [
      {
        ...acme,
        users: [
          ...acme.users.filter((user) => user.role === 'admin'),
          ...members.map(({ email, name }) => ({ email, name, role: 'member' as const })),
        ],
      },
    ],
  });
  const [route] = transport.routes;
  if (!route) throw new Error('the Teams transport has no route');
  for (const { id } of members) {
    for (const activity of connector.installActivities(id)) {
      const answer = await route.handle(
        {
          method: 'POST',
          path: route.path,
          query: new URLSearchParams(),
          headers: {
            authorization: `Bearer ${authority.activityToken({ audience: appId, serviceUrl: connector.serviceUrl })}`,
            'content-type': 'application/json',
          },
          body: new TextEncoder().encode(JSON.stringify(activity)),
          clientAddress: '127.0.0.1',
        },
        {},
      );
      if (answer.status !== 200) throw new Error(`installing the app answered ${answer.status}`);
    }
  }
  return {
    notifier,
    emails: members.map(({ email }) => email),
    async close() {
      await notifier.stop();
      await Promise.all([connector.close(), authority.close()]);
    },
  };
}

/**
 * The notifiers the in-process benchmarks measure: the given storage and the local inbox, or memory
 * storage and Slack against a fake Web API; limits that never refuse (the benchmarks measure work,
 * not the limiter's answers) and the test seed's organizations, users and keys.
 */
import { inboxTransport } from '../adapters/chat/inbox/index.js';
import { slackTransport } from '../adapters/chat/slack/index.js';
import { memoryStorage } from '../adapters/storage/memory/index.js';
import { createNotifier, type Notifier, type NotifierOptions } from '../core/notifier.js';
import type { StoragePorts } from '../core/ports/storage.js';
import { type FakeSlackProcess, startFakeSlackProcess } from '../test/support/slack-fake-process.js';
import { slackIdOf } from '../test/support/slack-workspace.js';
import { testSeed } from '../test/support/test-seed.js';

const unlimited = { burst: 1e12, perSecond: 1e12 };

/**
 * What a benchmark may set beyond the storage: its clock (the inbox's too), retention, scheduler, and
 * a callback transport.
 */
export type BenchNotifierOptions = Pick<NotifierOptions, 'clock' | 'retention' | 'scheduler' | 'callbacks'>;

/** A seeded notifier on `storage`, delivering to the inbox. */
export async function benchNotifier(
  storage: StoragePorts,
  options: BenchNotifierOptions = {},
): Promise<Notifier> {
  const notifier = createNotifier({
    storage,
    transports: [inboxTransport(options.clock ? { clock: options.clock } : {})],
    rateLimits: { perKey: unlimited, perOrganization: unlimited },
    ...options,
  });
  await notifier.seed(testSeed);
  return notifier;
}

/**
 * A seeded notifier on memory storage delivering to Slack only, against a fake Slack Web API in a
 * process of its own (standing in for Slack's servers) whose workspace has a user for each of
 * `emails`; limits that never refuse. The caller stops both.
 */
export async function benchSlackNotifier(
  emails: readonly string[],
): Promise<{ notifier: Notifier; slack: FakeSlackProcess }> {
  const workspace = {
    teamId: 'T0ACME',
    botToken: 'xoxb-acme-bench',
    users: emails.map((email) => ({ id: slackIdOf(email), email })),
  };
  const slack = await startFakeSlackProcess([workspace]);
  const notifier = createNotifier({
    storage: memoryStorage(),
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

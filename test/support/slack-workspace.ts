import type { SlackRetryOptions } from '../../adapters/chat/slack/index.js';
import { normalizeEmail } from '../../core/domain/directory.js';
import type { FakeSlackWorkspace } from './fake-slack.js';
import { testSeed } from './test-seed.js';

/** The Slack user id the tests give a seeded address: `U` + the address's letters and digits, upper-cased. */
export function slackIdOf(email: string): string {
  return `U${normalizeEmail(email)
    .replace(/@.*/, '')
    .replace(/[^a-z0-9]/g, '')
    .toUpperCase()}`;
}

/** The direct-message channel the fake Slack opens with a user of a workspace. */
export function dmChannelOf(teamId: string, email: string): string {
  return `D${teamId.slice(1)}${slackIdOf(email).slice(1)}`;
}

const usersOf = (organizationId: string) =>
  (testSeed.organizations.find((organization) => organization.id === organizationId)?.users ?? []).map(
    (user) => ({ id: slackIdOf(user.email), email: user.email }),
  );

/** The team id of the acme organization's workspace. */
export const acmeTeamId = 'T0ACME';

/** Two acme members of the test seed whom the Slack tests send to. */
export const bob = 'bob@acme.test';
export const carol = 'carol@acme.test';

/** The acme organization's workspace: every acme user of the test seed is a member. */
export const acmeWorkspace = (): FakeSlackWorkspace => ({
  teamId: acmeTeamId,
  botToken: 'xoxb-acme-0000000000-test',
  users: usersOf('acme'),
});

/** The globex organization's workspace. */
export const globexWorkspace = (): FakeSlackWorkspace => ({
  teamId: 'T0GLOBEX',
  botToken: 'xoxb-globex-000000000-test',
  users: usersOf('globex'),
});

/** Retries that keep tests fast: one retry, no back-off (a `429` still waits its `Retry-After`). */
export const fastRetry: SlackRetryOptions = { retries: 1, minDelayMs: 0, maxDelayMs: 1 };

/** The installation resolver of the tests: acme and globex have their workspaces, other organizations none. */
export const testInstallations = (organizationId: string) => {
  const workspace =
    organizationId === 'acme' ? acmeWorkspace() : organizationId === 'globex' ? globexWorkspace() : null;
  return workspace && { teamId: workspace.teamId, botToken: workspace.botToken };
};

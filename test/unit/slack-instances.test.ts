import { afterEach, describe, expect, it } from 'vitest';
import { type SlackTransport, slackTransport } from '../../adapters/chat/slack/index.js';
import { createNotifier, type Notifier } from '../../core/notifier.js';
import type { StoragePorts } from '../../core/ports/storage.js';
import { type FakeSlack, startFakeSlack } from '../support/fake-slack.js';
import { manualClock } from '../support/manual-clock.js';
import { memoryAndRedisStorages } from '../support/redis.js';
import { answerOf, asEarlierRelease, clickNewest } from '../support/slack-clicks.js';
import { testSigningSecret } from '../support/slack-signing.js';
import {
  acmeTeamId,
  acmeWorkspace,
  bob,
  carol,
  fastRetry,
  slackIdOf,
  testInstallations,
} from '../support/slack-workspace.js';
import { testKeys, testSeed } from '../support/test-seed.js';

const storages = await memoryAndRedisStorages('Slack across instances');

const team = acmeTeamId;

/** One instance of the service: a notifier with a Slack transport of its own, on the shared storage. */
interface Instance {
  notifier: Notifier;
  transport: SlackTransport;
}

describe.each(storages)('Slack across instances sharing one %s store', (_name, makeStorage) => {
  let slack: FakeSlack | undefined;
  let instances: Instance[] = [];
  const clock = manualClock();

  afterEach(async () => {
    for (const { notifier } of instances) await notifier.stop();
    instances = [];
    expect(slack?.violations).toEqual([]);
    await slack?.close();
  });

  async function start(): Promise<{ storage: StoragePorts; first: Instance; second: Instance }> {
    slack = await startFakeSlack([acmeWorkspace()]);
    const apiUrl = slack.apiUrl;
    const storage = makeStorage();
    const instance = async (): Promise<Instance> => {
      const transport = slackTransport({
        signingSecret: testSigningSecret,
        apiUrl,
        installation: testInstallations,
        retry: fastRetry,
        clock,
      });
      const notifier = createNotifier({ storage, transports: [transport], clock });
      instances.push({ notifier, transport });
      return { notifier, transport };
    };
    const first = await instance();
    await first.notifier.seed(testSeed);
    return { storage, first, second: await instance() };
  }

  const ask = async ({ notifier }: Instance, recipients: string[]): Promise<string> => {
    const response = await notifier.handle({
      method: 'POST',
      url: '/api/notify',
      headers: { 'x-api-key': testKeys.alice, 'content-type': 'application/json' },
      body: [
        Buffer.from(
          JSON.stringify({
            user_emails: recipients,
            message: 'Deploy *v2*?',
            response_request: {
              options: [
                { text: 'Approve', value: 'approve' },
                { text: 'Reject', value: 'reject' },
              ],
              timeout_minutes: 60,
            },
          }),
        ),
      ],
      clientAddress: '127.0.0.1',
    });
    expect(response?.status).toBe(200);
    return (JSON.parse(response?.body ?? '{}') as { request_id: string }).request_id;
  };

  /** Clicks `value` on the newest message of `owner` as `clicker`, through `instance`'s endpoint. */
  const click = async ({ transport }: Instance, owner: string, value: string, clicker = owner) => {
    if (!slack) throw new Error('no fake Slack is running');
    await clickNewest(
      slack,
      transport,
      { teamId: team, nowSeconds: clock.now() / 1000 },
      { owner, value, clicker },
    );
  };

  it('applies a click on a message one instance delivered through another, refusing anyone else', async () => {
    const { first, second } = await start();
    const requestId = await ask(first, [bob, carol]);
    await click(second, bob, 'approve', carol);
    expect(await answerOf(first.notifier, requestId, bob)).toBeNull();
    await click(second, bob, 'approve');
    expect(await answerOf(first.notifier, requestId, bob)).toBe('approve');
    const [answered] = slack?.messagesOf(team, slackIdOf(bob)) ?? [];
    expect(answered?.buttons).toEqual([]);
    expect(answered?.footer).toContain('Approve');

    clock.advance(61 * 60_000);
    await first.notifier.runDueWork();
    const [expired] = slack?.messagesOf(team, slackIdOf(carol)) ?? [];
    expect(expired?.buttons).toEqual([]);
    expect(expired?.footer).toMatch(/expired/);
  });

  it('routes a click on a message of an earlier release by the record it kept, in this store', async () => {
    const { storage, first, second } = await start();
    const requestId = await ask(first, [bob]);
    await asEarlierRelease(storage, requestId, bob, team);
    await click(second, bob, 'reject');
    expect(await answerOf(first.notifier, requestId, bob)).toBe('reject');
    expect(slack?.messagesOf(team, slackIdOf(bob))[0]?.buttons).toEqual([]);
  });
});

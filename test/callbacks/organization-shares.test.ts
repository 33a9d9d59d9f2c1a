import { afterEach, describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { deliverCallback } from '../../core/callbacks/deliver-callback.js';
import { organizationShares } from '../../core/callbacks/organization-shares.js';
import { callbackItemId } from '../../core/domain/due-work.js';
import { createNotifier, type Notifier } from '../../core/notifier.js';
import type {
  CallbackAttempt,
  CallbackAttemptResult,
  CallbackTransport,
} from '../../core/ports/callback-transport.js';
import { interactiveBody, post } from '../support/api-requests.js';
import { capturingLogger } from '../support/capturing-logger.js';
import { testKeys, testSeed } from '../support/test-seed.js';
import { until } from '../support/until.js';
import { callbackSetup, interactive, tableResolver } from './callback-setup.js';

/** Whether an attempt goes to globex's receiver. */
const toGlobex = (attempt: CallbackAttempt): boolean =>
  attempt.url.startsWith('https://hooks.globex.example/');

const delivered: CallbackAttemptResult = { outcome: 'delivered', status: 200 };

/**
 * Stands in for the receivers behind the callback transport: acme's do not answer until released
 * (an attacker's, each holding its attempt for the 15 s of a real one), globex's answer at once.
 */
function receivers(): CallbackTransport & {
  attempts: CallbackAttempt[];
  hanging(): number;
  release(): void;
} {
  const attempts: CallbackAttempt[] = [];
  let waiting: (() => void)[] = [];
  let released = false;
  return {
    resolver: tableResolver({
      'hooks.acme.example': ['93.184.216.34'],
      'hooks.globex.example': ['93.184.216.35'],
    }),
    allowInsecure: false,
    attempts,
    hanging: () => waiting.length,
    release() {
      released = true;
      for (const answer of waiting) answer();
      waiting = [];
    },
    send(attempt) {
      attempts.push(attempt);
      if (released || toGlobex(attempt)) return Promise.resolve(delivered);
      return new Promise((resolve) => waiting.push(() => resolve(delivered)));
    },
  };
}

async function finishedWithCallback(
  notifier: Notifier,
  key: string,
  email: string,
  url: string,
): Promise<string> {
  const response = await post(notifier, interactiveBody([email], 5, 'Deploy?', url), { 'x-api-key': key });
  const { request_id: requestId } = JSON.parse(response?.body ?? '{}') as { request_id: string };
  await notifier.click({ requestId, recipient: email, value: 'yes' });
  return requestId;
}

let notifier: Notifier | undefined;
/** Lets every hanging attempt end, so that a failed test's notifier can stop. */
let releaseReceivers: (() => void) | undefined;
afterEach(async () => {
  releaseReceivers?.();
  await notifier?.stop();
  notifier = undefined;
});

describe('callback attempts of one organization whose receivers never answer', () => {
  it("hold a quarter of the due-work slots at most: another organization's callback goes out at once", async () => {
    const transport = receivers();
    releaseReceivers = transport.release;
    const logger = capturingLogger();
    notifier = createNotifier({
      storage: memoryStorage(),
      transports: [inboxTransport()],
      callbacks: transport,
      dueWorkConcurrency: 64,
      rateLimits: { perKey: { burst: 1e6, perSecond: 1e6 }, perOrganization: { burst: 1e6, perSecond: 1e6 } },
      logger,
    });
    await notifier.seed(testSeed);
    for (let n = 0; n < 20; n += 1) {
      await finishedWithCallback(
        notifier,
        testKeys.alice,
        'bob@acme.test',
        `https://hooks.acme.example/${n}`,
      );
    }
    const globex = await finishedWithCallback(
      notifier,
      testKeys.gina,
      'gina@globex.test',
      'https://hooks.globex.example/',
    );
    notifier.start();
    await until(() => transport.attempts.some(toGlobex), 3000);
    expect(
      transport.attempts
        .filter(toGlobex)
        .map((attempt) => (JSON.parse(attempt.body) as { request_id: string }).request_id),
    ).toEqual([globex]);
    // A quarter of the 64 slots for acme: 16 attempts hang, the others were put off.
    await until(() => transport.hanging() === 16, 2000);
    expect(transport.hanging()).toBe(16);
    expect(transport.attempts).toHaveLength(17);

    transport.release();
    await until(() => transport.attempts.length === 21, 6000);
    const acme = transport.attempts.filter((attempt) =>
      attempt.url.startsWith('https://hooks.acme.example/'),
    );
    expect(new Set(acme.map((attempt) => attempt.url)).size).toBe(20);
    expect(acme).toHaveLength(20);
    // Putting an attempt off did not count as one: each callback went out at its first attempt.
    const logged = logger.entries.filter((entry) => entry.message === 'callback attempt');
    expect(logged.map((entry) => entry.fields?.attempt)).toEqual(Array(21).fill(1));
  });
});

describe('organizationShares', () => {
  it('puts an attempt off a second or two while shares come back, longer the longer none has, half a minute at most', () => {
    const shares = organizationShares(16, () => 0.999);
    for (let n = 0; n < 16; n += 1) expect(shares.take('acme', 0)).toBe(0);
    // Every share in use since 0: a second (jittered up to two) at first, then as long as none came back.
    expect(shares.take('acme', 0)).toBe(1999);
    expect(shares.take('acme', 5_000)).toBe(9995);
    expect(shares.take('acme', 20_000)).toBe(30_000);
    // Another organization's attempts are not put off.
    expect(shares.take('globex', 20_000)).toBe(0);
    // A share comes back: the next attempt takes it; the one after waits a second or two again.
    shares.give('acme');
    expect(shares.take('acme', 20_001)).toBe(0);
    expect(shares.take('acme', 20_002)).toBe(1999);
  });
});

describe('a callback attempt put off until its request is nearly deleted', () => {
  it('is put off no later than the last time the retention leaves for an attempt, then kept as failed', async () => {
    const hour = 60 * 60_000;
    const transport = receivers();
    const setup = await callbackSetup({ transport, retention: hour });
    notifier = setup.notifier;
    const sent = await setup.send(interactive('https://hooks.acme.example/late'));
    const requestId = String(sent.body.request_id);
    await setup.click(requestId, 'bob@acme.test', 'approve');
    await setup.click(requestId, 'dave@acme.test', 'approve');
    const finishedAt = setup.clock.now();
    const logger = capturingLogger();
    const context = { storage: setup.storage, clock: setup.clock, logger, retentionMs: hour };
    // Every share of acme held by attempts that never end.
    const shares = organizationShares(1);
    shares.take('acme', finishedAt);
    const item = {
      id: callbackItemId(requestId),
      kind: 'callback' as const,
      requestId,
      runAt: finishedAt,
      attempt: 0,
      leaseToken: 'lease',
    };
    // The last attempt may come a tenth of the retention before the request is deleted.
    const latest = finishedAt + hour - hour / 10;
    setup.clock.set(latest - 500);
    expect(await deliverCallback(context, transport, shares, item)).toEqual({
      done: false,
      retryAt: latest,
      postponed: true,
    });
    setup.clock.set(latest);
    expect(await deliverCallback(context, transport, shares, item)).toEqual({ done: true });
    expect(transport.attempts).toEqual([]);
    expect(await setup.notifier.failedCallbacks.list()).toMatchObject([
      { requestId, attempts: 0, lastStatus: null, lastError: expect.stringContaining('not attempted') },
    ]);
    // Kept as long as its request, to be replayed.
    setup.clock.set(finishedAt + hour - 1);
    expect(await setup.storage.failedCallbacks.get(requestId)).toMatchObject({ requestId });
  });
});

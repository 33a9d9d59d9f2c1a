import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type HttpCallbacksOptions, httpCallbacks } from '../../adapters/callbacks/index.js';
import { longestRetryDelayMs, retryDelaysMs } from '../../core/callbacks/retry-schedule.js';
import { type CallbackReceiver, startReceiver } from '../support/callback-receiver.js';
import { type CallbackSetup, callbackSetup, interactive } from './callback-setup.js';

let receiver: CallbackReceiver;
let setup: CallbackSetup;

beforeEach(async () => {
  receiver = await startReceiver();
  // Local receivers are loopback and http: only the development option allows them.
  setup = await callbackSetup({ allowInsecure: true, timeoutMs: 300 });
});
afterEach(async () => {
  await setup.notifier.stop();
  await receiver.close();
});

async function createRequest(extra: Record<string, unknown> = {}) {
  const sent = await setup.send(interactive(receiver.url(), extra));
  expect(sent.status).toBe(200);
  return { requestId: String(sent.body.request_id), secret: String(sent.body.callback_secret) };
}

/** Moves virtual time on and runs what fell due. */
async function elapse(ms: number) {
  setup.clock.advance(ms);
  await setup.notifier.runDueWork();
}

/** Verifies callback #index with the official library, as a receiver would at the moment of that attempt. */
const verified = (secret: string, index: number) => {
  const hit = receiver.received[index];
  if (!hit) throw new Error(`no callback #${index}`);
  vi.useFakeTimers({ toFake: ['Date'] });
  try {
    vi.setSystemTime(Number(hit.headers['webhook-timestamp']) * 1000);
    return new Webhook(secret).verify(hit.body, hit.headers);
  } finally {
    vi.useRealTimers();
  }
};

describe('httpCallbacks settings', () => {
  it.each<[HttpCallbacksOptions, string]>([
    [{ timeoutMs: 50_000 }, 'an attempt that could outlast the lease of its due work'],
    [{ timeoutMs: 40_000, lookupTimeoutMs: 15_000 }, 'timeouts that together could outlast it'],
    [{ timeoutMs: 0 }, 'no time at all'],
  ])('refuses %j: %s', (settings, _why) => {
    expect(() => httpCallbacks(settings)).toThrow(RangeError);
  });

  it.each(['false', '0', 1, null])(
    'refuses an allowInsecure of %j, which would take private targets',
    (value) => {
      expect(() => httpCallbacks({ allowInsecure: value as unknown as boolean })).toThrow(
        `httpCallbacks: allowInsecure must be true or false, got ${JSON.stringify(value)}`,
      );
    },
  );

  it('refuses a resolver without resolve', () => {
    expect(() => httpCallbacks({ resolver: {} as never })).toThrow(
      'httpCallbacks: resolver must have resolve(hostname)',
    );
  });

  it('takes an attempt of up to 50 s in all', () => {
    expect(() => httpCallbacks({ timeoutMs: 45_000, lookupTimeoutMs: 5_000 })).not.toThrow();
  });
});

describe('completion callbacks', () => {
  it('returns a whsec_ secret once, and the official standardwebhooks library verifies the callback of a finish by answers', async () => {
    const { requestId, secret } = await createRequest();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    await setup.click(requestId, 'bob@acme.test', 'approve');
    expect(receiver.received).toHaveLength(0);
    await setup.click(requestId, 'dave@acme.test', 'reject');
    await setup.notifier.runDueWork();
    expect(receiver.received).toHaveLength(1);
    const hit = receiver.received[0];
    expect(hit?.headers['content-type']).toBe('application/json');
    expect(hit?.headers['webhook-id']).toBe(`msg_${requestId.slice(4)}`);
    expect(Number(hit?.headers['webhook-timestamp'])).toBe(Math.floor(setup.clock.now() / 1000));
    expect(verified(secret, 0)).toEqual({
      type: 'request.finished',
      request_id: requestId,
      status: 'finished',
      external_reference_id: 'deploy-7',
      responses: [
        {
          user_email: 'bob@acme.test',
          option_value: 'approve',
          timestamp: expect.any(String),
          expired: false,
        },
        {
          user_email: 'dave@acme.test',
          option_value: 'reject',
          timestamp: expect.any(String),
          expired: false,
        },
      ],
      finished_at: new Date(setup.clock.now()).toISOString(),
    });
    const status = await setup.notifier.status(
      await setup.notifier.authenticate('cnk_test_alice_000000000000000000000001'),
      requestId,
    );
    expect(JSON.parse(hit?.body ?? '').responses).toEqual(status.responses);
  });

  it('signs the callback of a finish by timeout, with expired recipients', async () => {
    const { requestId, secret } = await createRequest();
    await setup.click(requestId, 'bob@acme.test', 'approve');
    await elapse(59_999);
    expect(receiver.received).toHaveLength(0);
    await elapse(1);
    expect(receiver.received).toHaveLength(1);
    expect(verified(secret, 0)).toMatchObject({
      status: 'finished',
      responses: [
        { user_email: 'bob@acme.test', option_value: 'approve', expired: false },
        { user_email: 'dave@acme.test', option_value: null, timestamp: null, expired: true },
      ],
    });
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(
        receiver.received[0]?.body ?? '',
        receiver.received[0]?.headers ?? {},
      ),
    ).toThrow();
  });

  it('retries a receiver that fails (500, timeout, refused connection, 302) with the same webhook-id until one success', async () => {
    receiver.plan(
      { status: 500 },
      { hang: true },
      { status: 302, headers: { location: 'https://elsewhere.test/' } },
    );
    const { requestId, secret } = await createRequest();
    await setup.click(requestId, 'bob@acme.test', 'approve');
    await setup.click(requestId, 'dave@acme.test', 'approve');
    await setup.notifier.runDueWork(); // attempt 1: 500
    await elapse(retryDelaysMs[0] * 1.2); // attempt 2: no answer within the timeout
    expect(receiver.received).toHaveLength(2);
    await receiver.pause();
    await elapse(retryDelaysMs[1] * 1.2); // attempt 3: connection refused
    await receiver.resume();
    await elapse(retryDelaysMs[2] * 1.2); // attempt 4: 302, not followed
    await elapse(retryDelaysMs[3] * 1.2); // attempt 5: 204
    await elapse(retryDelaysMs[4] * 1.2); // nothing more
    expect(receiver.received.map((r) => r.answered)).toEqual([500, null, 302, 204]);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    for (const index of [0, 1, 2, 3])
      expect(verified(secret, index)).toMatchObject({ request_id: requestId });
    expect(await setup.notifier.failedCallbacks.list()).toEqual([]);
  });

  it('waits about 5 s (±20 %) before the first retry, not sooner', async () => {
    receiver.plan({ status: 503 });
    const { requestId } = await createRequest();
    await setup.click(requestId, 'bob@acme.test', 'approve');
    await setup.click(requestId, 'dave@acme.test', 'approve');
    await setup.notifier.runDueWork();
    await elapse(3_999);
    expect(receiver.received).toHaveLength(1);
    await elapse(2_001);
    expect(receiver.received).toHaveLength(2);
  });

  it('stops at 410 Gone', async () => {
    receiver.plan({ status: 410 });
    const { requestId } = await createRequest();
    await setup.click(requestId, 'bob@acme.test', 'approve');
    await setup.click(requestId, 'dave@acme.test', 'approve');
    await setup.notifier.runDueWork();
    await elapse(48 * 3_600_000);
    expect(receiver.received).toHaveLength(1);
    expect(await setup.notifier.failedCallbacks.list()).toEqual([]);
  });

  it('honours a Retry-After longer than the schedule', async () => {
    receiver.plan({ status: 503, headers: { 'retry-after': '3600' } });
    const { requestId } = await createRequest();
    await setup.click(requestId, 'bob@acme.test', 'approve');
    await setup.click(requestId, 'dave@acme.test', 'approve');
    await setup.notifier.runDueWork();
    await elapse(3_599_000);
    expect(receiver.received).toHaveLength(1);
    await elapse(1_000);
    expect(receiver.received).toHaveLength(2);
  });

  it.each(['99999999999999', '9'.repeat(400), 'Fri, 31 Dec 9999 23:59:59 GMT'])(
    'caps a Retry-After of %s at the longest step (10 h) and counts every attempt',
    async (retryAfter) => {
      receiver.plan(
        ...Array.from({ length: 8 }, () => ({ status: 503, headers: { 'retry-after': retryAfter } })),
      );
      const { requestId } = await createRequest();
      await setup.click(requestId, 'bob@acme.test', 'approve');
      await setup.click(requestId, 'dave@acme.test', 'approve');
      await setup.notifier.runDueWork();
      await elapse(longestRetryDelayMs - 1_000);
      expect(receiver.received).toHaveLength(1);
      await elapse(1_000);
      expect(receiver.received).toHaveLength(2);
      for (const delay of retryDelaysMs.slice(1)) await elapse(Math.max(delay * 1.2, longestRetryDelayMs));
      await elapse(48 * 3_600_000);
      expect(receiver.received).toHaveLength(8);
      expect(await setup.notifier.failedCallbacks.list()).toEqual([
        expect.objectContaining({ requestId, attempts: 8, lastStatus: 503 }),
      ]);
    },
  );

  it.each(['Thu, 01 Jan 1970 00:00:00 GMT', '3600.5', '-5', 'soon'])(
    'keeps to the schedule (about 5 s) when Retry-After is %j, in the past or unreadable',
    async (retryAfter) => {
      receiver.plan({ status: 503, headers: { 'retry-after': retryAfter } });
      const { requestId } = await createRequest();
      await setup.click(requestId, 'bob@acme.test', 'approve');
      await setup.click(requestId, 'dave@acme.test', 'approve');
      await setup.notifier.runDueWork();
      await elapse(3_999);
      expect(receiver.received).toHaveLength(1);
      await elapse(2_001);
      expect(receiver.received).toHaveLength(2);
    },
  );

  it('keeps a callback whose every attempt failed, lists it, and replays it on request', async () => {
    receiver.plan(...Array.from({ length: 8 }, () => ({ status: 500 })));
    const { requestId, secret } = await createRequest();
    await setup.click(requestId, 'bob@acme.test', 'approve');
    await setup.click(requestId, 'dave@acme.test', 'approve');
    await setup.notifier.runDueWork();
    for (const delay of retryDelaysMs) await elapse(delay * 1.2);
    expect(receiver.received).toHaveLength(8);
    await elapse(48 * 3_600_000);
    expect(receiver.received).toHaveLength(8);
    const failed = await setup.notifier.failedCallbacks.list('acme');
    expect(failed).toEqual([
      expect.objectContaining({
        requestId,
        organizationId: 'acme',
        attempts: 8,
        lastStatus: 500,
        url: receiver.url(),
      }),
    ]);
    expect(await setup.notifier.failedCallbacks.replay(requestId)).toBe(true);
    expect(await setup.notifier.failedCallbacks.replay(requestId)).toBe(false);
    await setup.notifier.runDueWork();
    expect(receiver.received).toHaveLength(9);
    expect(receiver.received[8]?.answered).toBe(204);
    expect(verified(secret, 8)).toMatchObject({ request_id: requestId });
    expect(await setup.notifier.failedCallbacks.list()).toEqual([]);
  });

  /** A request finished by answers whose callback failed all 8 attempts: answers its id. */
  const failedForGood = async (): Promise<string> => {
    receiver.plan(...Array.from({ length: 8 }, () => ({ status: 500 })));
    const { requestId } = await createRequest();
    await setup.click(requestId, 'bob@acme.test', 'approve');
    await setup.click(requestId, 'dave@acme.test', 'approve');
    await setup.notifier.runDueWork();
    for (const delay of retryDelaysMs) await elapse(delay * 1.2);
    return requestId;
  };

  it('forgets a failed callback once its request has passed the retention (30 days): listed no more, not replayed', async () => {
    const requestId = await failedForGood();
    expect(await setup.notifier.failedCallbacks.list()).toHaveLength(1);
    await elapse(31 * 24 * 3_600_000);
    expect(await setup.notifier.failedCallbacks.list()).toEqual([]);
    expect(await setup.notifier.failedCallbacks.replay(requestId)).toBe(false);
    await setup.notifier.runDueWork();
    expect(receiver.received).toHaveLength(8);
  });

  it('answers false to the replay of a failure whose request has passed the retention, sending nothing', async () => {
    const requestId = await failedForGood();
    await elapse(31 * 24 * 3_600_000);
    expect(await setup.notifier.failedCallbacks.replay(requestId)).toBe(false);
    await setup.notifier.runDueWork();
    expect(receiver.received).toHaveLength(8);
  });

  it('sends no callback for a request without callback_url, and no secret', async () => {
    const sent = await setup.send({
      ...interactive(receiver.url()),
      response_request: { ...interactive('').response_request, callback_url: undefined },
    });
    expect(sent.status).toBe(200);
    expect(sent.body).not.toHaveProperty('callback_secret');
    await setup.click(String(sent.body.request_id), 'bob@acme.test', 'approve');
    await setup.click(String(sent.body.request_id), 'dave@acme.test', 'approve');
    await elapse(120_000);
    expect(receiver.received).toHaveLength(0);
  });
});

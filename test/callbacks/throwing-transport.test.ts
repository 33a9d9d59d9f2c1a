import { afterEach, describe, expect, it } from 'vitest';
import { retryDelaysMs } from '../../core/callbacks/retry-schedule.js';
import type { CallbackAttemptResult, CallbackTransport } from '../../core/ports/callback-transport.js';
import { type CallbackSetup, callbackSetup, interactive, tableResolver } from './callback-setup.js';

/** A transport whose every attempt runs `attempt`, counting the attempts. */
function scriptedTransport(attempt: () => CallbackAttemptResult): CallbackTransport & { calls(): number } {
  let calls = 0;
  return {
    resolver: tableResolver({ 'hooks.example': ['93.184.216.34'] }),
    allowInsecure: false,
    send() {
      calls += 1;
      return Promise.resolve(attempt());
    },
    calls: () => calls,
  };
}

/** A transport whose `send` throws before it even returns a promise. */
function throwingTransport(thrown: () => unknown): CallbackTransport & { calls(): number } {
  let calls = 0;
  return {
    resolver: tableResolver({ 'hooks.example': ['93.184.216.34'] }),
    allowInsecure: false,
    send() {
      calls += 1;
      throw thrown();
    },
    calls: () => calls,
  };
}

let setup: CallbackSetup;
afterEach(async () => {
  await setup.notifier.stop();
});

const longest = Math.max(...retryDelaysMs);

/**
 * Finishes a request with a callback and checks that the second attempt comes within `secondWithin`
 * ms after the first (counted and scheduled, not left to the lease's end), then runs every attempt of
 * the schedule at its latest time.
 */
async function runEveryAttempt(
  transport: CallbackTransport & { calls(): number },
  secondWithin: [earliest: number, latest: number] = [4_000, 6_000],
) {
  setup = await callbackSetup({ transport });
  const sent = await setup.send(interactive('https://hooks.example/hook'));
  expect(sent.status).toBe(200);
  const requestId = String(sent.body.request_id);
  await setup.click(requestId, 'bob@acme.test', 'approve');
  await setup.click(requestId, 'dave@acme.test', 'approve');
  await setup.notifier.runDueWork();
  expect(transport.calls()).toBe(1);
  const [earliest, latest] = secondWithin;
  setup.clock.advance(earliest - 1);
  await setup.notifier.runDueWork();
  expect(transport.calls()).toBe(1);
  setup.clock.advance(latest - earliest + 1);
  await setup.notifier.runDueWork();
  expect(transport.calls()).toBe(2);
  for (const delay of retryDelaysMs.slice(1)) {
    setup.clock.advance(Math.max(delay * 1.2, longest));
    await setup.notifier.runDueWork();
  }
  setup.clock.advance(48 * 3_600_000);
  await setup.notifier.runDueWork();
  expect(transport.calls()).toBe(retryDelaysMs.length + 1);
  return { requestId, failed: await setup.notifier.failedCallbacks.list() };
}

describe('a callback transport that throws', () => {
  it.each([
    ['an Error', () => new Error('socket exploded'), 'Error: socket exploded'],
    ['a string', () => 'plain string', 'plain string'],
    ['undefined', () => undefined, 'undefined'],
    ['an object without toString', () => Object.create(null), 'a thrown value that cannot be shown as text'],
    [
      'an object whose toString throws',
      () => ({
        toString() {
          throw new Error('nope');
        },
      }),
      'a thrown value that cannot be shown as text',
    ],
  ])(
    'counts %s as a failed attempt, schedules the next, and keeps the failure after the last',
    async (_kind, thrown, lastError) => {
      const { requestId, failed } = await runEveryAttempt(throwingTransport(thrown));
      expect(failed).toEqual([
        expect.objectContaining({
          requestId,
          attempts: retryDelaysMs.length + 1,
          lastStatus: null,
          lastError,
        }),
      ]);
    },
  );
});

describe('a callback transport that asks for an odd delay', () => {
  const failed503 = (retryAfterMs: number) => () =>
    ({ outcome: 'failed', status: 503, error: 'HTTP 503', retryAfterMs }) as const;

  it.each([Number.NaN, -1, Number.NEGATIVE_INFINITY])(
    'counts an attempt answered with retryAfterMs %d and keeps to the schedule',
    async (retryAfterMs) => {
      const { requestId, failed } = await runEveryAttempt(scriptedTransport(failed503(retryAfterMs)));
      expect(failed).toEqual([
        expect.objectContaining({ requestId, attempts: retryDelaysMs.length + 1, lastStatus: 503 }),
      ]);
    },
  );

  it.each([Number.POSITIVE_INFINITY, Number.MAX_VALUE])(
    'counts an attempt answered with retryAfterMs %d and waits the longest step (10 h)',
    async (retryAfterMs) => {
      const { requestId, failed } = await runEveryAttempt(scriptedTransport(failed503(retryAfterMs)), [
        longest,
        longest,
      ]);
      expect(failed).toEqual([
        expect.objectContaining({ requestId, attempts: retryDelaysMs.length + 1, lastStatus: 503 }),
      ]);
    },
  );
});

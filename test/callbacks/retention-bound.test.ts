import { afterEach, describe, expect, it } from 'vitest';
import type { CallbackTransport } from '../../core/ports/callback-transport.js';
import { type CallbackSetup, callbackSetup, interactive, tableResolver } from './callback-setup.js';

const hour = 60 * 60_000;
const day = 24 * hour;

/** A receiver that never takes a callback: every attempt answers 503, with `retryAfterMs` when given. */
function failingTransport(retryAfterMs: number | null): CallbackTransport & { attempts: number[] } {
  const attempts: number[] = [];
  return {
    resolver: tableResolver({ 'hooks.example': ['93.184.216.34'] }),
    allowInsecure: false,
    async send({ timestamp }) {
      attempts.push(timestamp * 1000);
      return { outcome: 'failed', status: 503, error: 'HTTP 503', retryAfterMs };
    },
    attempts,
  };
}

let setup: CallbackSetup;
afterEach(async () => {
  await setup.notifier.stop();
});

/** Finishes a request with a callback; answers its id and when it finished. */
async function finished(): Promise<{ requestId: string; finishedAt: number }> {
  const sent = await setup.send(interactive('https://hooks.example/hook'));
  expect(sent.status).toBe(200);
  const requestId = String(sent.body.request_id);
  await setup.click(requestId, 'bob@acme.test', 'approve');
  await setup.click(requestId, 'dave@acme.test', 'approve');
  return { requestId, finishedAt: setup.clock.now() };
}

/** Runs the due work every `stepMs` for `forMs`, at its start and at its end too. */
async function runFor(forMs: number, stepMs = hour): Promise<void> {
  for (let passed = 0; passed < forMs; passed += stepMs) {
    await setup.notifier.runDueWork();
    setup.clock.advance(stepMs);
  }
  await setup.notifier.runDueWork();
}

describe('a callback whose attempts would outlast its request', () => {
  it("is kept as failed while its request is kept, when the receiver's Retry-After stretches the schedule", async () => {
    const transport = failingTransport(10 * hour);
    setup = await callbackSetup({ transport, retention: 48 * hour });
    const { requestId, finishedAt } = await finished();
    await runFor(47 * hour);
    const [failure] = await setup.notifier.failedCallbacks.list();
    expect(failure).toMatchObject({ requestId, attempts: transport.attempts.length, lastStatus: 503 });
    // Every attempt came before the request's retention ended, less the margin kept before it.
    expect(transport.attempts.length).toBeLessThan(8);
    expect(Math.max(...transport.attempts)).toBeLessThanOrEqual(finishedAt + 48 * hour - hour);
    expect(failure?.failedAt).toBeLessThan(finishedAt + 48 * hour);
  });

  it('is kept as failed again when a replay late in the retention fails', async () => {
    const transport = failingTransport(null);
    setup = await callbackSetup({ transport });
    const { requestId } = await finished();
    await runFor(2 * day);
    expect(transport.attempts).toHaveLength(8);
    // Ten minutes before the last hour of the request's 30 days: room for three attempts.
    setup.clock.advance(27 * day + 22 * hour + 50 * 60_000);
    expect(await setup.notifier.failedCallbacks.replay(requestId)).toBe(true);
    expect(await setup.notifier.failedCallbacks.list()).toEqual([]);
    await runFor(40 * 60_000, 60_000);
    expect(transport.attempts).toHaveLength(11);
    expect(await setup.notifier.failedCallbacks.list()).toMatchObject([{ requestId, attempts: 3 }]);
  });

  it('runs the whole schedule when the retention leaves room for it; the failure is kept as long as its request', async () => {
    const transport = failingTransport(null);
    setup = await callbackSetup({ transport, retention: 3 * day });
    const { requestId, finishedAt } = await finished();
    await runFor(2 * day);
    expect(transport.attempts).toHaveLength(8);
    expect(await setup.notifier.failedCallbacks.list()).toMatchObject([{ attempts: 8 }]);
    setup.clock.advance(finishedAt + 3 * day - 1 - setup.clock.now());
    expect(await setup.storage.failedCallbacks.get(requestId)).toMatchObject({ requestId });
    setup.clock.advance(1);
    // The store forgets it by itself, though nobody listed the failures since.
    expect(await setup.storage.failedCallbacks.get(requestId)).toBeNull();
  });
});

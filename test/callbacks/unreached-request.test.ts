import { afterEach, describe, expect, it } from 'vitest';
import type { CallbackAttempt, CallbackTransport } from '../../core/ports/callback-transport.js';
import { timeoutDue } from '../../core/use-cases/send-notification.js';
import { sampleRequest } from '../support/sample-request.js';
import { type CallbackSetup, callbackSetup, tableResolver } from './callback-setup.js';

const minute = 60_000;
const hour = 60 * minute;

/** A receiver that takes every callback. */
function receiver(): CallbackTransport & { attempts: CallbackAttempt[] } {
  const attempts: CallbackAttempt[] = [];
  return {
    resolver: tableResolver({ 'hooks.example': ['93.184.216.34'] }),
    allowInsecure: false,
    attempts,
    async send(attempt) {
      attempts.push(attempt);
      return { outcome: 'delivered', status: 204 };
    },
  };
}

let setup: CallbackSetup;
afterEach(async () => {
  await setup.notifier.stop();
});

/**
 * A request stored with its callback and its one-minute timeout, whose send reached nobody: as a
 * send leaves it whose storage answered after the caller was told 503 (the request was stored, the
 * send had stopped), or whose every delivery failed.
 */
async function unreached(): Promise<string> {
  const now = setup.clock.now();
  const request = sampleRequest({
    id: 'req_unreached0000000000000001',
    version: 0,
    timeoutMinutes: 1,
    createdAt: now,
    expiresAt: now + minute,
    callback: { url: 'https://hooks.example/hook', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
  });
  await setup.storage.requests.createRequest(request, timeoutDue(request));
  return request.id;
}

/** Runs the due work every `stepMs` for `forMs`. */
async function runFor(forMs: number, stepMs: number): Promise<void> {
  for (let passed = 0; passed < forMs; passed += stepMs) {
    setup.clock.advance(stepMs);
    await setup.notifier.runDueWork();
  }
}

const copyOf = (requestId: string, deliveredAt: number) => ({
  sendId: requestId,
  recipient: 'bob@acme.test',
  platform: 'inbox',
  ref: { messageId: 'msg_1' },
  deliveredAt,
});

describe('the callback of a request that reached nobody', () => {
  it('is not sent while no copy is on record, and is once a repeat of the send delivers one', async () => {
    const transport = receiver();
    setup = await callbackSetup({ transport });
    const requestId = await unreached();
    await runFor(30 * minute, minute);
    expect((await setup.storage.requests.getRequest(requestId))?.status).toBe('finished');
    expect(transport.attempts).toEqual([]);
    // The caller repeats the send with its Idempotency-Key: the copy goes out, the request's id is answered.
    await setup.storage.deliveries.addDelivery(copyOf(requestId, setup.clock.now()));
    await runFor(5 * minute, minute);
    expect(transport.attempts.map((attempt) => JSON.parse(attempt.body).request_id)).toEqual([requestId]);
  });

  it('is sent at once when a recipient answered before their copy was on record', async () => {
    const transport = receiver();
    setup = await callbackSetup({ transport });
    const requestId = await unreached();
    // The click came a store's round trip after the copy went out, before the copy was recorded.
    await setup.click(requestId, 'bob@acme.test', 'approve');
    await setup.notifier.runDueWork();
    expect(transport.attempts.map((attempt) => JSON.parse(attempt.body).request_id)).toEqual([requestId]);
  });

  it('reads the copies at the first attempt only, not at its retries', async () => {
    const failing: CallbackTransport & { attempts: number } = {
      resolver: tableResolver({ 'hooks.example': ['93.184.216.34'] }),
      allowInsecure: false,
      attempts: 0,
      async send() {
        failing.attempts += 1;
        return { outcome: 'failed', status: 503, error: 'HTTP 503', retryAfterMs: null };
      },
    };
    setup = await callbackSetup({ transport: failing });
    const requestId = await unreached();
    await setup.storage.deliveries.addDelivery(copyOf(requestId, setup.clock.now()));
    while (failing.attempts === 0) await runFor(1000, 1000);
    expect(failing.attempts).toBe(1);
    // Counted from the first attempt on: the expiry, which updates the copies, came before it.
    const { deliveries } = setup.storage;
    const listDeliveries = deliveries.listDeliveries.bind(deliveries);
    let reads = 0;
    deliveries.listDeliveries = (sendId) => {
      // The callback's reads only: the refreshes of the stand-in copy read them too.
      if (new Error().stack?.includes('deliver-callback')) reads += 1;
      return listDeliveries(sendId);
    };
    await runFor(2 * 24 * hour, 10 * minute);
    expect(failing.attempts).toBe(8);
    expect(reads).toBe(0);
  });

  it('is dropped once a repeat of its send could no longer deliver (a day, as an Idempotency-Key is kept)', async () => {
    const transport = receiver();
    setup = await callbackSetup({ transport });
    const requestId = await unreached();
    await runFor(25 * hour, 10 * minute);
    expect(transport.attempts).toEqual([]);
    await setup.storage.deliveries.addDelivery(copyOf(requestId, setup.clock.now()));
    await runFor(hour, minute);
    expect(transport.attempts).toEqual([]);
  });
});

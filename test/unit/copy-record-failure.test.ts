import { afterEach, describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { NotifyError } from '../../core/errors.js';
import { createNotifier, type Notifier } from '../../core/notifier.js';
import type { DeliveryStore } from '../../core/ports/delivery-store.js';
import { inboxOf, interactiveBody, plainBody, post } from '../support/api-requests.js';
import { capturingLogger } from '../support/capturing-logger.js';
import { testSeed } from '../support/test-seed.js';

const unavailable = () => new NotifyError('unavailable', 'Storage is temporarily unavailable');

/**
 * A notifier on memory storage whose records of copies go through `record` (given the store's own
 * `addDelivery`), with the count of its calls and the log.
 */
async function recordingThrough(
  record: (
    inner: DeliveryStore['addDelivery'],
    ...args: Parameters<DeliveryStore['addDelivery']>
  ) => Promise<number | null>,
) {
  const storage = memoryStorage();
  const calls = { tries: 0 };
  const inner = storage.deliveries.addDelivery;
  const logger = capturingLogger();
  const notifier = createNotifier({
    storage: {
      ...storage,
      deliveries: {
        ...storage.deliveries,
        addDelivery: (...args) => {
          calls.tries += 1;
          return record(inner, ...args);
        },
      },
    },
    transports: [inboxTransport()],
    logger,
  });
  await notifier.seed(testSeed);
  notifiers.push(notifier);
  return { notifier, logger, calls };
}

const notifiers: Notifier[] = [];
afterEach(async () => {
  for (const notifier of notifiers.splice(0)) await notifier.stop();
});

describe('a copy the platform took whose record the store refuses', () => {
  it('makes the send answer 503, never 500 naming a recipient who was reached', async () => {
    // Stands in for a Redis refusing writes with an error its adapter does not know as passing.
    const { notifier, logger, calls } = await recordingThrough(() =>
      Promise.reject(new Error('MYSTERY the store refuses this write')),
    );
    const answer = await post(notifier, plainBody(['bob@acme.test']), {
      'idempotency-key': 'record-refused',
    });
    expect(answer?.status).toBe(503);
    expect(JSON.parse(answer?.body ?? '{}')).toEqual({
      status: 'error',
      details: 'Storage is temporarily unavailable',
    });
    expect(logger.entries.filter((entry) => entry.message === 'delivery failed')).toEqual([]);
    // An error the store does not call passing is not tried again.
    expect(calls.tries).toBe(1);
  });

  it('is tried again for about a second while the store says it is unavailable, then answers 503', async () => {
    const { notifier, calls } = await recordingThrough(() => Promise.reject(unavailable()));
    const started = performance.now();
    const answer = await post(notifier, plainBody(['bob@acme.test']), { 'idempotency-key': 'store-down' });
    expect(answer?.status).toBe(503);
    // Tried once, then again after each of the three pauses, a second in all.
    expect(calls.tries).toBe(4);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('is not tried again after a try that took over a second (a stalled connection): the send answers 503', async () => {
    const { notifier, calls } = await recordingThrough(async () => {
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      throw unavailable();
    });
    const answer = await post(notifier, plainBody(['bob@acme.test']), { 'idempotency-key': 'store-stalls' });
    expect(answer?.status).toBe(503);
    expect(calls.tries).toBe(1);
  });

  it('is tried again while the store fails for a moment: the send answers 200, and a repeat posts nothing', async () => {
    let refusals = 2;
    // Stands in for a Redis failing over (its adapter calls READONLY passing): its first writes of
    // bob's record fail, the next one lands.
    const { notifier, logger } = await recordingThrough((inner, delivery, options) => {
      if (delivery.recipient !== 'bob@acme.test' || refusals === 0) return inner(delivery, options);
      refusals -= 1;
      return Promise.reject(unavailable());
    });
    const body = interactiveBody(['bob@acme.test', 'carol@acme.test']);
    const first = await post(notifier, body, { 'idempotency-key': 'record-flickers' });
    expect(first?.status).toBe(200);
    expect(refusals).toBe(0);
    expect(logger.entries.filter((entry) => entry.message.startsWith('could not record'))).toHaveLength(2);
    const repeat = await post(notifier, body, { 'idempotency-key': 'record-flickers' });
    expect(repeat?.status).toBe(200);
    expect(repeat?.body).toBe(first?.body);
    expect(await inboxOf(notifier, 'bob@acme.test')).toHaveLength(1);
    expect(await inboxOf(notifier, 'carol@acme.test')).toHaveLength(1);
  });
});

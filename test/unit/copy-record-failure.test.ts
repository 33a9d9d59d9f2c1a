import { describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { NotifyError } from '../../core/errors.js';
import { createNotifier } from '../../core/notifier.js';
import type { StoragePorts } from '../../core/ports/storage.js';
import { inboxOf, interactiveBody, plainBody, post } from '../support/api-requests.js';
import { capturingLogger } from '../support/capturing-logger.js';
import { testSeed } from '../support/test-seed.js';

describe('a copy the platform took whose record the store refuses', () => {
  it('makes the send answer 503, never 500 naming a recipient who was reached', async () => {
    const storage = memoryStorage();
    let tries = 0;
    // Stands in for a Redis refusing writes with an error its adapter does not know as passing.
    const refusing: StoragePorts = {
      ...storage,
      deliveries: {
        ...storage.deliveries,
        addDelivery: () => {
          tries += 1;
          return Promise.reject(new Error('MYSTERY the store refuses this write'));
        },
      },
    };
    const logger = capturingLogger();
    const notifier = createNotifier({ storage: refusing, transports: [inboxTransport()], logger });
    await notifier.seed(testSeed);
    try {
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
      expect(tries).toBe(1);
    } finally {
      await notifier.stop();
    }
  });

  it('is tried again for about a second while the store says it is unavailable, then answers 503', async () => {
    const storage = memoryStorage();
    let tries = 0;
    const down: StoragePorts = {
      ...storage,
      deliveries: {
        ...storage.deliveries,
        addDelivery: () => {
          tries += 1;
          return Promise.reject(new NotifyError('unavailable', 'Storage is temporarily unavailable'));
        },
      },
    };
    const notifier = createNotifier({ storage: down, transports: [inboxTransport()] });
    await notifier.seed(testSeed);
    try {
      const started = performance.now();
      const answer = await post(notifier, plainBody(['bob@acme.test']), { 'idempotency-key': 'store-down' });
      expect(answer?.status).toBe(503);
      // Tried once, then again after each of the three pauses, a second in all.
      expect(tries).toBe(4);
      expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    } finally {
      await notifier.stop();
    }
  });

  it('is not tried again after a try that took over a second (a stalled connection): the send answers 503', async () => {
    const storage = memoryStorage();
    let tries = 0;
    const stalled: StoragePorts = {
      ...storage,
      deliveries: {
        ...storage.deliveries,
        addDelivery: async () => {
          tries += 1;
          await new Promise((resolve) => setTimeout(resolve, 1_100));
          throw new NotifyError('unavailable', 'Storage is temporarily unavailable');
        },
      },
    };
    const notifier = createNotifier({ storage: stalled, transports: [inboxTransport()] });
    await notifier.seed(testSeed);
    try {
      const answer = await post(notifier, plainBody(['bob@acme.test']), {
        'idempotency-key': 'store-stalls',
      });
      expect(answer?.status).toBe(503);
      expect(tries).toBe(1);
    } finally {
      await notifier.stop();
    }
  });

  it('is tried again while the store fails for a moment: the send answers 200, and a repeat posts nothing', async () => {
    const storage = memoryStorage();
    let refusals = 2;
    // Stands in for a Redis failing over (its adapter calls READONLY passing): its first writes of
    // the record fail, the next one lands.
    const flickering: StoragePorts = {
      ...storage,
      deliveries: {
        ...storage.deliveries,
        addDelivery: (delivery, options) => {
          if (delivery.recipient !== 'bob@acme.test' || refusals === 0) {
            return storage.deliveries.addDelivery(delivery, options);
          }
          refusals -= 1;
          return Promise.reject(new NotifyError('unavailable', 'Storage is temporarily unavailable'));
        },
      },
    };
    const logger = capturingLogger();
    const notifier = createNotifier({ storage: flickering, transports: [inboxTransport()], logger });
    await notifier.seed(testSeed);
    const body = interactiveBody(['bob@acme.test', 'carol@acme.test']);
    try {
      const first = await post(notifier, body, { 'idempotency-key': 'record-flickers' });
      expect(first?.status).toBe(200);
      expect(refusals).toBe(0);
      expect(logger.entries.filter((entry) => entry.message.startsWith('could not record'))).toHaveLength(2);
      const repeat = await post(notifier, body, { 'idempotency-key': 'record-flickers' });
      expect(repeat?.status).toBe(200);
      expect(repeat?.body).toBe(first?.body);
      expect(await inboxOf(notifier, 'bob@acme.test')).toHaveLength(1);
      expect(await inboxOf(notifier, 'carol@acme.test')).toHaveLength(1);
    } finally {
      await notifier.stop();
    }
  });
});

import { describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
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
      // Tried once, then again after each of the three pauses.
      expect(tries).toBe(4);
    } finally {
      await notifier.stop();
    }
  });

  it('is tried again while the store fails for a moment: the send answers 200, and a repeat posts nothing', async () => {
    const storage = memoryStorage();
    let refusals = 2;
    // Stands in for a Redis failing over: its first writes of the record fail, the next one lands.
    const flickering: StoragePorts = {
      ...storage,
      deliveries: {
        ...storage.deliveries,
        addDelivery: (delivery, options) => {
          if (delivery.recipient !== 'bob@acme.test' || refusals === 0) {
            return storage.deliveries.addDelivery(delivery, options);
          }
          refusals -= 1;
          return Promise.reject(new Error("READONLY You can't write against a read only replica."));
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

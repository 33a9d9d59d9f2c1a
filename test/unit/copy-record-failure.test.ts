import { describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { createNotifier } from '../../core/notifier.js';
import type { StoragePorts } from '../../core/ports/storage.js';
import { plainBody, post } from '../support/api-requests.js';
import { capturingLogger } from '../support/capturing-logger.js';
import { testSeed } from '../support/test-seed.js';

describe('a copy the platform took whose record the store refuses', () => {
  it('makes the send answer 503, never 500 naming a recipient who was reached', async () => {
    const storage = memoryStorage();
    // Stands in for a Redis refusing writes with an error its adapter does not know as passing.
    const refusing: StoragePorts = {
      ...storage,
      deliveries: {
        ...storage.deliveries,
        addDelivery: () => Promise.reject(new Error('MYSTERY the store refuses this write')),
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
    } finally {
      await notifier.stop();
    }
  });
});

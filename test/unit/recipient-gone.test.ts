import { describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import type { ChatTransport } from '../../core/adapter-kit.js';
import { createNotifier } from '../../core/notifier.js';
import { plainBody, post } from '../support/api-requests.js';
import { capturingLogger } from '../support/capturing-logger.js';
import { testSeed } from '../support/test-seed.js';

/**
 * A platform that finds every recipient by address, then learns while delivering that they are
 * gone. Its error is made as a transport built apart from the notifier makes it (CommonJS beside
 * ESM, another copy of the package): an error of that name, not an instance of the kit's class.
 */
const goneOnDelivery = (): ChatTransport => ({
  platform: 'elsewhere',
  routes: [],
  address: (user) => ({ installationId: 'elsewhere', userRef: user.email }),
  deliver: () =>
    Promise.reject(Object.assign(new Error('deactivated since'), { name: 'RecipientGoneError' })),
  update: async () => {},
  connect: () => {},
});

describe('a recipient a platform finds gone while delivering', () => {
  it('counts as not reached there: a send another platform reached answers 200, and logs no failure', async () => {
    const logger = capturingLogger();
    const notifier = createNotifier({
      storage: memoryStorage(),
      transports: [goneOnDelivery(), inboxTransport()],
      logger,
    });
    await notifier.seed(testSeed);
    try {
      expect((await post(notifier, plainBody(['bob@acme.test'])))?.status).toBe(200);
      expect(logger.entries.filter((entry) => entry.message === 'delivery failed')).toEqual([]);
    } finally {
      await notifier.stop();
    }
  });

  it('makes a send no platform reached answer 500 naming them, as unreached', async () => {
    const logger = capturingLogger();
    const notifier = createNotifier({ storage: memoryStorage(), transports: [goneOnDelivery()], logger });
    await notifier.seed(testSeed);
    try {
      const answer = await post(notifier, plainBody(['bob@acme.test']));
      expect(answer?.status).toBe(500);
      expect(answer?.body).toContain('bob@acme.test');
      expect(logger.entries).toContainEqual(
        expect.objectContaining({ level: 'warn', message: 'no chat platform reaches this recipient' }),
      );
    } finally {
      await notifier.stop();
    }
  });
});

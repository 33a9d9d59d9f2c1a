import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { redisStorage } from '../../adapters/storage/redis/index.js';
import { createNotifier, type Notifier } from '../../core/notifier.js';
import type { StoragePorts } from '../../core/ports/storage.js';
import { plainBody, post } from '../support/api-requests.js';
import { capturingLogger } from '../support/capturing-logger.js';
import {
  type RedisServerProcess,
  redisServerForTests,
  redisServerProcess,
} from '../support/redis-server-process.js';
import { testSeed } from '../support/test-seed.js';

const installed = await redisServerForTests('Replay after a Redis script cache loss');

const keyed = (notifier: Notifier) =>
  post(notifier, plainBody(['bob@acme.test']), { 'idempotency-key': 'deploy-42' });

/** Sends with a key, repeats the moment the answer is in, and expects the stored answer replayed. */
async function expectReplayRightAfter(notifier: Notifier): Promise<void> {
  const first = await keyed(notifier);
  expect(first?.status).toBe(200);
  const repeat = await keyed(notifier);
  expect({
    status: repeat?.status,
    body: repeat?.body,
    replayed: repeat?.headers['idempotent-replayed'],
  }).toEqual({ status: 200, body: first?.body, replayed: 'true' });
}

describe('a repeat of a keyed send the moment its answer is in', () => {
  it("is replayed from a store whose calls may overtake each other (MongoDB's pool of connections)", async () => {
    const storage = memoryStorage();
    // Stands in for a store over a pool of connections: the answer's record takes longer to land
    // than the repeat's look-up of the key.
    const overtaken: StoragePorts = {
      ...storage,
      idempotency: {
        ...storage.idempotency,
        async complete(...args) {
          await new Promise((resolve) => setTimeout(resolve, 30));
          await storage.idempotency.complete(...args);
        },
      },
    };
    const notifier = createNotifier({ storage: overtaken, transports: [inboxTransport()] });
    await notifier.seed(testSeed);
    try {
      await expectReplayRightAfter(notifier);
    } finally {
      await notifier.stop();
    }
  });

  it('is still answered when the record of the answer cannot be stored, and the failure is logged', async () => {
    const storage = memoryStorage();
    const logger = capturingLogger();
    const notifier = createNotifier({
      storage: {
        ...storage,
        idempotency: { ...storage.idempotency, complete: () => Promise.reject(new Error('store down')) },
      },
      transports: [inboxTransport()],
      logger,
    });
    await notifier.seed(testSeed);
    try {
      expect((await keyed(notifier))?.status).toBe(200);
      expect(logger.entries).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          message: 'could not store the answer of an Idempotency-Key; a repeat resumes the send',
        }),
      );
    } finally {
      await notifier.stop();
    }
  });

  describe.skipIf(!installed)(
    'on a Redis server that has not cached the scripts (new, restarted, or flushed)',
    () => {
      let server: RedisServerProcess;
      beforeAll(async () => {
        server = await redisServerProcess();
        await server.start();
      });
      afterAll(async () => {
        await server.stop();
      });

      it('is replayed: the script the record takes runs a round trip late, after the repeat', async () => {
        const client = createClient({ url: server.url });
        client.on('error', () => undefined);
        await client.connect();
        await client.sendCommand(['SCRIPT', 'FLUSH']);
        const notifier = createNotifier({
          storage: redisStorage({ client, keyPrefix: 'replay-order:' }),
          transports: [inboxTransport()],
        });
        await notifier.seed(testSeed);
        try {
          await expectReplayRightAfter(notifier);
        } finally {
          await notifier.stop();
          client.destroy();
        }
      });
    },
  );
});

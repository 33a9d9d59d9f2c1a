import { randomUUID } from 'node:crypto';
import {
  MongoBulkWriteError,
  MongoClient,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerError,
  MongoTopologyClosedError,
} from 'mongodb';
import { afterAll, describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { inboxMessages } from '../../adapters/chat/inbox/messages.js';
import { ensureMongoIndexes, mongoStorage } from '../../adapters/storage/mongo/index.js';
import { isUnavailableError, toMongoStorageError } from '../../adapters/storage/mongo/unavailable.js';
import { isNotifyError, NotifyError } from '../../core/errors.js';
import { createNotifier } from '../../core/notifier.js';
import type { StoragePorts } from '../../core/ports/storage.js';
import { scopedTransportState } from '../../core/transport-state/scoped-state.js';
import { describeStorageContract, describeTransportStateContract } from '../../testing/index.js';
import { testKeys, testSeed } from '../support/test-seed.js';

// The contract needs a real server: MONGODB_URL names one (a standalone is enough). Without it the
// suite is skipped, loudly; the tests below it that need no server still run.
const mongoUrl = process.env.MONGODB_URL ?? '';
const skipReason =
  'MongoDB contract suite skipped: set MONGODB_URL to a MongoDB 6+ server (replica set not required)';
if (mongoUrl === '') console.warn(skipReason);

const freshName = (): string => `chat_notify_test_${randomUUID().replaceAll('-', '').slice(0, 20)}`;

/**
 * One interactive request through the whole core on `storage`: seeding twice, an idempotent send and
 * its replay, a click, the timeout run as due work, the status and the inbox copies.
 */
async function interactiveFlow(storage: StoragePorts): Promise<void> {
  let now = Date.now();
  const clock = { now: () => now };
  const notifier = createNotifier({
    storage,
    transports: [inboxTransport({ clock })],
    clock,
  });
  const send = (body: unknown) =>
    notifier.handle({
      method: 'POST',
      url: '/api/notify',
      headers: {
        'x-api-key': testKeys.alice,
        'content-type': 'application/json',
        'idempotency-key': 'flow-1',
      },
      body: [JSON.stringify(body)],
      clientAddress: '127.0.0.1',
    });
  try {
    await notifier.seed(testSeed);
    await notifier.seed(testSeed);
    const request = {
      user_emails: ['bob@acme.test', 'Carol@Acme.test'],
      message: 'Deploy **now**?',
      response_request: {
        options: [
          { text: 'Yes', value: 'yes' },
          { text: 'No', value: 'no' },
        ],
        timeout_minutes: 5,
      },
    };
    const first = await send(request);
    expect(first?.status).toBe(200);
    const replay = await send(request);
    expect(replay?.body).toBe(first?.body);
    expect(replay?.headers['idempotent-replayed']).toBe('true');
    const { request_id: requestId } = JSON.parse(first?.body ?? '{}') as { request_id: string };
    expect(await notifier.click({ requestId, recipient: 'bob@acme.test', value: 'yes' })).toBe('accepted');
    now += 6 * 60_000;
    expect(await notifier.runDueWork()).toBeGreaterThanOrEqual(1);
    const principal = await notifier.authenticate(testKeys.alice);
    const status = await notifier.status(principal, requestId);
    expect(status.status).toBe('finished');
    expect(status.responses.map((r) => [r.user_email, r.option_value, r.expired])).toEqual([
      ['bob@acme.test', 'yes', false],
      ['Carol@Acme.test', null, true],
    ]);
    const inbox = await inboxMessages({
      state: scopedTransportState(storage.transportState, 'inbox'),
      clock,
      retentionMs: 30 * 24 * 60 * 60 * 1000,
    }).list('bob@acme.test');
    expect(inbox).toHaveLength(1);
    expect(inbox[0]).toMatchObject({ requestId, selected: 'yes', buttonsEnabled: false });
    expect(await storage.dueWork.nextRunAt()).toBeNull();
  } finally {
    await notifier.stop();
  }
}

describe.skipIf(mongoUrl === '')('MongoDB storage on MONGODB_URL', () => {
  let client: MongoClient | undefined;
  const connect = async (): Promise<MongoClient> => {
    client ??= await new MongoClient(mongoUrl, { serverSelectionTimeoutMS: 5_000 }).connect();
    return client;
  };

  /** A second client, as another instance of the service would hold. */
  let otherClient: MongoClient | undefined;
  const connectOther = async (): Promise<MongoClient> => {
    otherClient ??= await new MongoClient(mongoUrl, { serverSelectionTimeoutMS: 5_000 }).connect();
    return otherClient;
  };

  afterAll(async () => {
    await client?.close();
    await otherClient?.close();
  });

  // A database of its own for every test, dropped after it. No clock: the stores read the server's.
  describeStorageContract('mongodb', async () => {
    const name = freshName();
    const db = (await connect()).db(name);
    await ensureMongoIndexes({ db });
    return {
      storage: mongoStorage({ db }),
      secondInstance: async () => mongoStorage({ db: (await connectOther()).db(name) }),
      teardown: async () => {
        await db.dropDatabase();
      },
    };
  });

  describeTransportStateContract('mongodb', async () => {
    const name = freshName();
    const db = (await connect()).db(name);
    await ensureMongoIndexes({ db });
    return {
      state: mongoStorage({ db }).transportState,
      secondInstance: async () => mongoStorage({ db: (await connectOther()).db(name) }).transportState,
      teardown: async () => {
        await db.dropDatabase();
      },
    };
  });

  it('keeps deployments with different collection prefixes apart in one database', async () => {
    const db = (await connect()).db(freshName());
    try {
      const a = { db, collectionPrefix: 'a_' };
      const b = { db, collectionPrefix: 'b_' };
      await Promise.all([ensureMongoIndexes(a), ensureMongoIndexes(b)]);
      await mongoStorage(a).directory.saveOrganization({ id: 'org_1', name: 'A' });
      expect(await mongoStorage(b).directory.getOrganization('org_1')).toBeNull();
      expect(await mongoStorage(a).directory.getOrganization('org_1')).toEqual({ id: 'org_1', name: 'A' });
      const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
      expect(names).toContain('a_organizations');
      expect(names.every((name) => name.startsWith('a_') || name.startsWith('b_'))).toBe(true);
    } finally {
      await db.dropDatabase();
    }
  });

  it('creates its indexes idempotently', async () => {
    const db = (await connect()).db(freshName());
    try {
      await ensureMongoIndexes({ db });
      await ensureMongoIndexes({ db });
      for (const collection of ['chat_notify_idempotency', 'chat_notify_transport_state']) {
        const indexes = await db.collection(collection).indexes();
        expect(indexes.find((index) => index.name === 'expiry')?.expireAfterSeconds).toBe(0);
      }
    } finally {
      await db.dropDatabase();
    }
  });

  it('finds due work by walking an index, without sorting documents in memory', async () => {
    const db = (await connect()).db(freshName());
    try {
      await ensureMongoIndexes({ db });
      const items = [1, 2, 3].map((i) => ({
        id: `due-${i}`,
        kind: 'timeout' as const,
        requestId: `req-${i}`,
        runAt: 1000 * i,
        attempt: 0,
      }));
      await mongoStorage({ db }).dueWork.enqueue(items);
      const requests = db.collection('chat_notify_requests');
      // The filters of claim and nextRunAt.
      const filters = [
        {
          nextClaimableAt: { $lte: 5000 },
          due: { $elemMatch: { claimableAt: { $lte: 5000 }, leaseToken: { $nin: [] } } },
        },
        { nextClaimableAt: { $gte: Number.NEGATIVE_INFINITY } },
      ];
      for (const filter of filters) {
        const explained = await requests
          .find(filter)
          .sort({ nextClaimableAt: 1 })
          .limit(1)
          .explain('queryPlanner');
        const plan = JSON.stringify(explained.queryPlanner.winningPlan);
        expect(plan).toContain('next_claimable_at');
        expect(plan).not.toContain('"SORT"');
      }
    } finally {
      await db.dropDatabase();
    }
  });

  it('runs an interactive request through the core: idempotent send, click, timeout, status', async () => {
    const db = (await connect()).db(freshName());
    try {
      await ensureMongoIndexes({ db });
      await interactiveFlow(mongoStorage({ db }));
    } finally {
      await db.dropDatabase();
    }
  });

  it('keeps a message whose text and buttons look like operators verbatim', async () => {
    const db = (await connect()).db(freshName());
    try {
      await ensureMongoIndexes({ db });
      const storage = mongoStorage({ db });
      const request = {
        id: 'req_dollar',
        organizationId: 'org_1',
        version: 0,
        status: 'pending' as const,
        message: '$message',
        options: [{ text: '$$ROOT', value: '$value' }],
        mode: 'onUserAction' as const,
        timeoutMinutes: 1,
        createdAt: 1,
        expiresAt: 2,
        finishedAt: null,
        externalReferenceId: '$ref',
        sender: { userId: 'usr_1', name: '$name' },
        callback: null,
        recipients: [],
      };
      await storage.requests.createRequest(request, { enqueue: [], cancel: [] });
      const next = { ...request, version: 1, message: '$$NOW' };
      expect(await storage.requests.updateRequest(next, 0, { enqueue: [], cancel: ['$id'] })).toBe(true);
      expect(await storage.requests.getRequest(request.id)).toEqual(next);
      const scope = { organizationId: 'org_1', key: '$key' };
      const timing = { now: 1, leaseMs: 1000, ttlMs: 60_000 };
      expect(await storage.idempotency.acquire(scope, '$fingerprint', '$sendId', timing)).toEqual({
        outcome: 'acquired',
        sendId: '$sendId',
      });
      await storage.idempotency.complete(scope, '$sendId', { status: 200, body: '$body' });
      expect(await storage.idempotency.acquire(scope, '$fingerprint', '$other', timing)).toEqual({
        outcome: 'completed',
        response: { status: 200, body: '$body' },
      });
    } finally {
      await db.dropDatabase();
    }
  });
});

// Beyond the contract, and needing no server: how driver failures reach callers.
describe('MongoDB storage errors', () => {
  it('reports connection failures as unavailable, keeping the cause', () => {
    const failures = [
      new MongoNetworkError('connection reset'),
      new MongoTopologyClosedError(),
      new MongoNotConnectedError('not connected'),
      new MongoServerError({ code: 10107, errmsg: 'not primary' }),
      // What a bulk write throws when its connection fails: the driver's error as its answer.
      new MongoBulkWriteError(new MongoNetworkError('connection reset'), {} as never),
    ];
    for (const failure of failures) {
      const error = toMongoStorageError(failure);
      expect(isNotifyError(error, 'unavailable')).toBe(true);
      expect(error).toMatchObject({ details: 'Storage is temporarily unavailable', retryAfterSeconds: 1 });
      expect((error as NotifyError).cause).toBe(failure);
    }
  });

  it('lets every other error through unchanged', () => {
    const others = [
      new MongoServerError({ code: 11000, errmsg: 'E11000 duplicate key error' }),
      new MongoBulkWriteError({ message: 'E11000 duplicate key error', code: 11000 }, {} as never),
      new NotifyError('internal', 'Request req_1 already exists'),
      new RangeError('cost must be a finite number >= 0, got -1'),
    ];
    for (const other of others) {
      expect(isUnavailableError(other)).toBe(false);
      expect(toMongoStorageError(other)).toBe(other);
    }
  });

  it('answers unavailable from every store when no server can be reached', async () => {
    // Nothing listens on the discard port; server selection gives up after 300 ms.
    const client = new MongoClient('mongodb://127.0.0.1:9/', {
      serverSelectionTimeoutMS: 300,
      connectTimeoutMS: 300,
    });
    try {
      const db = client.db(freshName());
      const storage = mongoStorage({ db });
      const attempts: Promise<unknown>[] = [
        ensureMongoIndexes({ db }),
        storage.directory.findPrincipalByDigest('0'.repeat(64)),
        storage.requests.getRequest('req_1'),
        storage.requests.updateRequest(
          {
            id: 'req_1',
            organizationId: 'org_1',
            version: 1,
            status: 'pending',
            message: 'm',
            options: [],
            mode: 'onTimeout',
            timeoutMinutes: 1,
            createdAt: 0,
            expiresAt: 60_000,
            finishedAt: null,
            externalReferenceId: null,
            sender: { userId: 'usr_1', name: 'Ada' },
            callback: null,
            recipients: [],
          },
          0,
          { enqueue: [], cancel: [] },
        ),
        storage.deliveries.listDeliveries('notif_1'),
        storage.idempotency.acquire({ organizationId: 'org_1', key: 'k' }, 'fp', 'notif_1', {
          now: 0,
          leaseMs: 1000,
          ttlMs: 1000,
        }),
        storage.rateLimits.take([{ key: 'k', capacity: 1, refillPerSecond: 1 }], 1),
        storage.admission.admit({
          digest: '0'.repeat(64),
          failedAuth: { key: 'auth-failures:127.0.0.1', capacity: 1, refillPerSecond: 1 },
          perKey: { capacity: 1, refillPerSecond: 1 },
          perOrganization: { capacity: 1, refillPerSecond: 1 },
        }),
        storage.dueWork.claim(0, 10, 1000),
        storage.dueWork.nextRunAt(),
        storage.transportState.getMany(['inbox:msg:1']),
        storage.transportState.compareAndSet('inbox:msg:1', 'v', null),
        storage.transportState.append('inbox:recipient:ada@example.test', 'msg_1'),
        storage.failedCallbacks.take('req_1'),
      ];
      const outcomes = await Promise.allSettled(attempts);
      for (const outcome of outcomes) {
        expect(outcome.status).toBe('rejected');
        const reason: unknown = outcome.status === 'rejected' ? outcome.reason : undefined;
        expect(isNotifyError(reason, 'unavailable')).toBe(true);
        expect((reason as NotifyError).retryAfterSeconds).toBe(1);
        // The first operation to auto-connect fails server selection; the others find the topology closed.
        expect(['MongoServerSelectionError', 'MongoTopologyClosedError']).toContain(
          ((reason as NotifyError).cause as Error).name,
        );
      }
    } finally {
      await client.close();
    }
  });
});

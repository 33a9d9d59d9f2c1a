import { asyncScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import type { StoragePorts } from '../../core/adapter-kit.js';
import type { CoreContext } from '../../core/context.js';
import { NotifyError } from '../../core/errors.js';
import { createNotifier } from '../../core/index.js';
import { silentLogger } from '../../core/ports/logger.js';
import { defaultRateLimits } from '../../core/rate-limit/settings.js';
import { plainView } from '../../core/request/message-view.js';
import type { NotifyRequest } from '../../core/schemas/notify-request.js';
import { randomIds } from '../../core/security/random-id.js';
import { admitSend } from '../../core/use-cases/admit-send.js';
import { admitWithExtras } from '../../core/use-cases/authenticate.js';
import { deliverCopies } from '../../core/use-cases/deliver-copies.js';
import { sendIdempotently } from '../../core/use-cases/send-idempotently.js';
import { testKeys, testSeed } from '../support/test-seed.js';

/** A seeded memory storage whose directory counts the lookups of recipients made through it. */
async function seededStorage() {
  const storage = memoryStorage();
  await createNotifier({ storage, transports: [] }).seed(testSeed);
  const lookups = { count: 0 };
  const counted: StoragePorts = {
    ...storage,
    directory: {
      ...storage.directory,
      findUsersByEmail: (organizationId, emails) => {
        lookups.count += 1;
        return storage.directory.findUsersByEmail(organizationId, emails);
      },
    },
  };
  return { storage: counted, lookups };
}

/**
 * The context of a plain send, which needs neither the request machine nor the due-work runner that
 * `createNotifier` adds.
 */
function plainSendContext(storage: StoragePorts, perKeyBurst = 10): CoreContext {
  const transport = inboxTransport();
  transport.connect({
    click: async () => 'not-found',
    listUsers: async () => [],
    copies: async () => [],
    view: async () => null,
    state: storage.transportState,
  });
  const context: Omit<CoreContext, 'machine' | 'dueWork'> = {
    storage,
    transports: [transport],
    clock: { now: () => Date.now() },
    ids: randomIds,
    logger: silentLogger,
    scheduler: asyncScheduler,
    rateLimits: { ...defaultRateLimits, perKey: { burst: perKeyBurst, perSecond: 0.001 } },
    callbacks: null,
    retentionMs: 60_000,
  };
  return context as CoreContext;
}

const input: NotifyRequest = {
  user_emails: ['bob@acme.test', ' Dave@Acme.test ', 'BOB@acme.test'],
  message: 'Deploy done',
};

const refusedBody = (): NotifyRequest => {
  throw new NotifyError('invalid_request', 'message: Required');
};

const codeOf = async (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => 'admitted',
    (error: unknown) => (error instanceof NotifyError ? error.code : String(error)),
  );

describe('admitSend', () => {
  it("answers the send's recipients from the admission, so that the send looks none up itself", async () => {
    const { storage, lookups } = await seededStorage();
    const context = plainSendContext(storage);
    const admitted = await admitSend(context, testKeys.alice, '127.0.0.1', () => input);
    expect(admitted.users?.map((user) => user.email).sort()).toEqual(['bob@acme.test', 'dave@acme.test']);
    const sent = await sendIdempotently(context, admitted.principal, admitted.input, undefined, {
      found: admitted.users,
    });
    expect(sent.status).toBe(200);
    expect(lookups.count).toBe(0);
  });

  it('refuses an unknown address after the admission, as the send did when it looked the users up itself', async () => {
    const { storage } = await seededStorage();
    const context = plainSendContext(storage);
    const body = { ...input, user_emails: ['bob@acme.test', 'nobody@acme.test'] };
    const admitted = await admitSend(context, testKeys.alice, '127.0.0.1', () => body);
    await expect(
      sendIdempotently(context, admitted.principal, body, undefined, { found: admitted.users }),
    ).rejects.toThrow('Unknown user emails: nobody@acme.test');
  });

  it('answers authentication, then the rate limit, then the body (docs/behaviour.md#order-of-checks)', async () => {
    const { storage } = await seededStorage();
    const context = plainSendContext(storage, 1);
    expect(await codeOf(admitSend(context, 'cnk_wrong', '127.0.0.1', refusedBody))).toBe('unauthenticated');
    expect(await codeOf(admitSend(context, undefined, '127.0.0.1', refusedBody))).toBe('unauthenticated');
    expect(await codeOf(admitSend(context, testKeys.alice, '127.0.0.1', refusedBody))).toBe(
      'invalid_request',
    );
    expect(await codeOf(admitSend(context, testKeys.alice, '127.0.0.1', refusedBody))).toBe('rate_limited');
    expect(await codeOf(admitSend(context, testKeys.bob, '127.0.0.1', () => input))).toBe('admitted');
  });
});

describe('the steps of a send without an async function of their own', () => {
  it('answers a store that throws instead of rejecting through its promise, as an async step would', async () => {
    const { storage } = await seededStorage();
    const broken = new Error('the store threw at once');
    const fail = () => {
      throw broken;
    };
    const context = plainSendContext({
      ...storage,
      admission: { admit: fail },
      deliveries: { ...storage.deliveries, listDeliveries: fail },
    });
    // Calling them must not throw: a caller learns of the failure from the promise alone.
    const admission = admitWithExtras(context, testKeys.alice, '127.0.0.1');
    await expect(admission).rejects.toBe(broken);
    const organization = { id: 'acme', name: 'Acme Inc' };
    const send = { organization, sendId: 'notif_1', resumed: true, recorded: true };
    const delivery = deliverCopies(context, send, [], () => plainView('notif_1', 'Deploy done'));
    await expect(delivery).rejects.toBe(broken);
  });
});

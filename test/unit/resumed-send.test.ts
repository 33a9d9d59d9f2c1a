import { describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { createNotifier } from '../../core/notifier.js';
import { randomIds } from '../../core/security/random-id.js';
import { inboxOf, interactiveBody, post } from '../support/api-requests.js';
import { flakyTransport } from '../support/flaky-transport.js';
import { testSeed } from '../support/test-seed.js';

const alice = 'alice@acme.test';
const bob = 'bob@acme.test';
const requestId = 'req_resumedresumedresumed000';

describe('a resumed interactive send', () => {
  it('brings the copies an earlier attempt delivered up to the request as it stands now', async () => {
    const storage = memoryStorage();
    // The first send gets a known id; a retry draws a fresh one, which its key's record replaces.
    let drawn = 0;
    const inbox = flakyTransport(inboxTransport());
    const notifier = createNotifier({
      storage,
      transports: [inbox],
      ids: { ...randomIds, requestId: () => (drawn++ === 0 ? requestId : randomIds.requestId()) },
    });
    await notifier.seed(testSeed);
    const body = interactiveBody([alice, bob]);
    const key = { 'idempotency-key': 'resumed-send' };
    const aliceSees = () => inboxOf(notifier, alice);

    inbox.failNext(bob, 1);
    expect((await post(notifier, body, key))?.status).toBe(500);
    // Alice's answer is stored, but the update of her copy never happens: the attempt that
    // delivered it stopped (a crash) before it could tell her copy was behind.
    const request = await storage.requests.getRequest(requestId);
    if (!request) throw new Error('the first attempt stored no request');
    const answered = {
      ...request,
      version: request.version + 1,
      recipients: request.recipients.map((recipient) =>
        recipient.key === alice ? { ...recipient, value: 'yes', respondedAt: request.createdAt } : recipient,
      ),
    };
    expect(await storage.requests.updateRequest(answered, request.version, { enqueue: [], cancel: [] })).toBe(
      true,
    );
    expect((await aliceSees()).map((message) => message.selected)).toEqual([null]);

    const retried = await post(notifier, body, key);
    expect(retried?.status).toBe(200);
    expect(JSON.parse(retried?.body ?? '{}')).toMatchObject({ request_id: requestId });
    expect((await aliceSees()).map((message) => message.selected)).toEqual(['yes']);
    await notifier.stop();
  });
});

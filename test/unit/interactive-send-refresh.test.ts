import { describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { type ChatTransport, NotifyError, type StoragePorts } from '../../core/adapter-kit.js';
import { createNotifier, type Notifier, type NotifierOptions } from '../../core/index.js';
import { capturingLogger } from '../support/capturing-logger.js';
import { manualClock } from '../support/manual-clock.js';
import { sendInteractive } from '../support/send-interactive.js';
import { testSeed } from '../support/test-seed.js';

/** The memory storage, counting the reads of interactive requests. */
function countingStorage() {
  const storage = memoryStorage();
  const reads = { count: 0 };
  const counted: StoragePorts = {
    ...storage,
    requests: {
      ...storage.requests,
      getRequest: (id) => {
        reads.count += 1;
        return storage.requests.getRequest(id);
      },
    },
  };
  return { storage: counted, reads };
}

/**
 * The inbox, keeping the version of the last view applied to each recipient's copy; `beforeDeliver`
 * runs before a copy goes out, so that a test can act while a send is under way.
 */
function watchedInbox(beforeDeliver: (recipient: string, sendId: string) => Promise<void>) {
  const inner = inboxTransport();
  const shown = new Map<string, number>();
  /** Recipients whose next update fails, as a platform briefly down would make it. */
  const failing = new Set<string>();
  const transport: ChatTransport = {
    platform: inner.platform,
    routes: inner.routes,
    address: (user, organization) => inner.address(user, organization),
    connect: (sink) => inner.connect(sink),
    async deliver(delivery) {
      await beforeDeliver(delivery.recipient, delivery.message.sendId);
      const ref = await inner.deliver(delivery);
      shown.set(delivery.recipient, delivery.message.version);
      return ref;
    },
    async update(delivery, ref) {
      if (failing.delete(delivery.recipient)) throw new Error('the platform is briefly down');
      await inner.update(delivery, ref);
      shown.set(delivery.recipient, Math.max(shown.get(delivery.recipient) ?? 0, delivery.message.version));
    },
  };
  return { transport, shown, failing };
}

const until = async (condition: () => Promise<boolean>): Promise<void> => {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 1));
};

/**
 * Sends an interactive request to Bob and Dave through a notifier on `storage` whose inbox lets
 * Bob click once his copy is on record and before Dave's goes out: Bob's click updates his copy,
 * Dave's goes out with the view of before it, and only the send itself can bring it up to date
 * (Dave's first update failing, with `failDave`). Answers the notifier, the request and the versions
 * the copies show.
 */
async function sendWithClickDuringDelivery(
  storage: StoragePorts,
  { failDave = false, ...options }: { failDave?: boolean } & Pick<NotifierOptions, 'clock' | 'logger'> = {},
): Promise<{ notifier: Notifier; requestId: string; shown: Map<string, number> }> {
  let notifier: Notifier | null = null;
  const { transport, shown, failing } = watchedInbox(async (recipient, sendId) => {
    if (recipient !== 'dave@acme.test' || notifier === null) return;
    await until(async () => (await storage.deliveries.listDeliveries(sendId)).length > 0);
    if (failDave) failing.add('dave@acme.test');
    expect(await notifier.click({ requestId: sendId, recipient: 'bob@acme.test', value: 'yes' })).toBe(
      'accepted',
    );
  });
  notifier = createNotifier({ storage, transports: [transport], ...options });
  await notifier.seed(testSeed);
  const requestId = await sendInteractive(notifier, ['bob@acme.test', 'dave@acme.test']);
  return { notifier, requestId, shown };
}

describe('an interactive send brings its copies up to date after a click during its delivery', () => {
  it('reads its request no more once its copies are on record when nobody clicked', async () => {
    const { storage, reads } = countingStorage();
    const { transport, shown } = watchedInbox(async () => {});
    const notifier = createNotifier({ storage, transports: [transport] });
    await notifier.seed(testSeed);
    reads.count = 0;
    await sendInteractive(notifier, ['bob@acme.test', 'dave@acme.test']);
    expect(reads.count).toBe(0);
    expect(Object.fromEntries(shown)).toEqual({ 'bob@acme.test': 0, 'dave@acme.test': 0 });
    await notifier.stop();
  });

  it('updates a copy that went out with the first view after a click on an earlier copy was stored', async () => {
    const { storage } = countingStorage();
    const { notifier, requestId, shown } = await sendWithClickDuringDelivery(storage);
    const latest = await storage.requests.getRequest(requestId);
    expect(latest?.version).toBe(1);
    expect(Object.fromEntries(shown)).toEqual({ 'bob@acme.test': 1, 'dave@acme.test': 1 });
    await notifier.stop();
  });

  it('schedules a refresh when that update fails, which brings the copy up to date later', async () => {
    const clock = manualClock();
    const { notifier, shown } = await sendWithClickDuringDelivery(memoryStorage({ clock }), {
      failDave: true,
      clock,
    });
    expect(Object.fromEntries(shown)).toEqual({ 'bob@acme.test': 1, 'dave@acme.test': 0 });
    clock.advance(10_000);
    await notifier.runDueWork();
    expect(Object.fromEntries(shown)).toEqual({ 'bob@acme.test': 1, 'dave@acme.test': 1 });
    await notifier.stop();
  });

  it('still answers the send when the store cannot read the request to update the copies, and refreshes them later', async () => {
    const clock = manualClock();
    const storage = memoryStorage({ clock });
    const logger = capturingLogger();
    let failed = false;
    // The send's first read of its request once both copies are on record fails: a store blip.
    const blip: StoragePorts = {
      ...storage,
      requests: {
        ...storage.requests,
        getRequest: async (id) => {
          if (!failed && (await storage.deliveries.listDeliveries(id)).length === 2) {
            failed = true;
            throw new NotifyError('unavailable', 'Storage is temporarily unavailable');
          }
          return storage.requests.getRequest(id);
        },
      },
    };
    const { notifier, shown } = await sendWithClickDuringDelivery(blip, { clock, logger });
    expect(Object.fromEntries(shown)).toEqual({ 'bob@acme.test': 1, 'dave@acme.test': 0 });
    expect(logger.entries.map((entry) => entry.message)).toContain(
      'could not bring the copies of a send up to date; left to a refresh',
    );
    clock.advance(10_000);
    await notifier.runDueWork();
    expect(Object.fromEntries(shown)).toEqual({ 'bob@acme.test': 1, 'dave@acme.test': 1 });
    await notifier.stop();
  });

  it('still answers the send when that refresh cannot be scheduled, and logs it', async () => {
    const storage = memoryStorage();
    const logger = capturingLogger();
    const down: StoragePorts = {
      ...storage,
      dueWork: {
        ...storage.dueWork,
        enqueue: async () => {
          throw new NotifyError('unavailable', 'the store is down');
        },
      },
    };
    // The helper's send throws unless it answered a request id.
    const { notifier, shown } = await sendWithClickDuringDelivery(down, { failDave: true, logger });
    expect(Object.fromEntries(shown)).toEqual({ 'bob@acme.test': 1, 'dave@acme.test': 0 });
    expect(logger.entries.map((entry) => entry.message)).toContain(
      'could not schedule a refresh of copies left behind; they show an older state',
    );
    await notifier.stop();
  });
});

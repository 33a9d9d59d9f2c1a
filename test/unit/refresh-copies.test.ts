import { describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import type { ChatTransport } from '../../core/adapter-kit.js';
import { NotifyError } from '../../core/errors.js';
import { createNotifier } from '../../core/index.js';
import { pledgedRefreshDelayMs } from '../../core/request/due-changes.js';
import { inboxOf } from '../support/api-requests.js';
import { manualClock } from '../support/manual-clock.js';
import { sendInteractive } from '../support/send-interactive.js';
import { testSeed } from '../support/test-seed.js';

/**
 * The inbox, whose updates fail while `down` is set: stands in for a chat platform (Slack, Teams)
 * that is briefly unreachable, which cannot be produced here.
 */
function outageTransport(inner: ChatTransport) {
  const state = { down: false, failedUpdates: 0 };
  const transport: ChatTransport = {
    platform: inner.platform,
    routes: inner.routes,
    address: (user, organization) => inner.address(user, organization),
    connect: (sink) => inner.connect(sink),
    deliver: (delivery) => inner.deliver(delivery),
    async update(delivery, ref) {
      if (state.down) {
        state.failedUpdates += 1;
        throw new Error('platform unavailable');
      }
      return inner.update(delivery, ref);
    },
  };
  return { transport, state };
}

async function setup() {
  const clock = manualClock(Date.parse('2026-11-23T10:00:00.000Z'));
  const storage = memoryStorage({ clock });
  const { transport, state } = outageTransport(inboxTransport({ clock }));
  const notifier = createNotifier({ storage, clock, transports: [transport] });
  await notifier.seed(testSeed);
  const requestId = await sendInteractive(notifier, ['bob@acme.test']);
  return { clock, storage, notifier, state, requestId, inboxOf: (email: string) => inboxOf(notifier, email) };
}

describe('a failed message update is retried as durable due work', () => {
  it('schedules a refresh when an update fails, and the refresh brings the copy up to date', async () => {
    const { clock, storage, notifier, state, requestId, inboxOf } = await setup();
    state.down = true;
    expect(await notifier.click({ requestId, recipient: 'bob@acme.test', value: 'yes' })).toBe('accepted');
    expect(state.failedUpdates).toBe(1);
    expect((await inboxOf('bob@acme.test'))[0]?.selected).toBeNull(); // the copy still shows the old state
    expect(await storage.dueWork.nextRunAt()).toBeLessThanOrEqual(clock.now() + 6_000);

    state.down = false;
    clock.advance(6_000);
    expect(await notifier.runDueWork()).toBe(1);
    const [copy] = await inboxOf('bob@acme.test');
    expect(copy?.selected).toBe('yes');
    expect(copy?.buttons.every((button) => button.disabled)).toBe(true);
    // Done, and the request finished with Bob's answer: no work is left.
    expect(await storage.dueWork.nextRunAt()).toBeNull();
  });

  it('tries again on a schedule while the platform stays down, then gives up', async () => {
    const { clock, storage, notifier, state, requestId } = await setup();
    state.down = true;
    await notifier.click({ requestId, recipient: 'bob@acme.test', value: 'no' });
    let refreshes = 0;
    for (let round = 0; round < 10; round += 1) {
      const next = await storage.dueWork.nextRunAt();
      if (next === null) break;
      clock.advance(next - clock.now());
      refreshes += await notifier.runDueWork();
    }
    // One try per step of the schedule (5 s, 30 s, 2 min, 10 min, 30 min, 1 h), then it stops.
    expect(refreshes).toBe(6);
    expect(state.failedUpdates).toBe(1 + refreshes);
    await notifier.stop();
  });
});

describe('a store that fails after a change is stored', () => {
  /**
   * Memory storage whose next read of a send's copies fails once `failNext` is set: stands in for a
   * Redis connection that drops between the write of a change and the read that follows it.
   */
  async function flakySetup() {
    const clock = manualClock(Date.parse('2026-11-23T10:00:00.000Z'));
    const storage = memoryStorage({ clock });
    const flaw = { failNext: false };
    const deliveries = {
      ...storage.deliveries,
      listDeliveries: (sendId: string) => {
        if (!flaw.failNext) return storage.deliveries.listDeliveries(sendId);
        flaw.failNext = false;
        return Promise.reject(new Error('Socket closed unexpectedly'));
      },
    };
    const notifier = createNotifier({
      storage: { ...storage, deliveries },
      clock,
      transports: [inboxTransport({ clock })],
    });
    await notifier.seed(testSeed);
    const requestId = await sendInteractive(notifier, ['bob@acme.test'], 1);
    return { clock, notifier, flaw, requestId, inboxOf: (email: string) => inboxOf(notifier, email) };
  }

  it('accepts the click, and a refresh brings the copy up to date', async () => {
    const { clock, notifier, flaw, requestId, inboxOf } = await flakySetup();
    flaw.failNext = true;
    expect(await notifier.click({ requestId, recipient: 'bob@acme.test', value: 'yes' })).toBe('accepted');
    expect((await inboxOf('bob@acme.test'))[0]?.selected).toBeNull();
    clock.advance(6_000);
    expect(await notifier.runDueWork()).toBe(1);
    expect((await inboxOf('bob@acme.test'))[0]?.selected).toBe('yes');
  });

  it('finishes a timeout, and a refresh takes the buttons away', async () => {
    const { clock, notifier, flaw, inboxOf } = await flakySetup();
    clock.advance(60_000);
    flaw.failNext = true;
    expect(await notifier.runDueWork()).toBe(1);
    expect((await inboxOf('bob@acme.test'))[0]?.buttons.every((button) => button.disabled)).toBe(false);
    clock.advance(6_000);
    expect(await notifier.runDueWork()).toBe(1);
    expect((await inboxOf('bob@acme.test'))[0]?.buttons.every((button) => button.disabled)).toBe(true);
  });
});

describe('a change stored though its write answered an error still reaches every copy', () => {
  /**
   * Memory storage whose next request write, once `loseNextReply` is set, is stored and then
   * answered with an error: stands in for a Redis reply lost with its connection, or a process that
   * died right after its write, neither of which memory storage can produce.
   */
  async function setupLosingReplies() {
    const clock = manualClock(Date.parse('2026-11-23T10:00:00.000Z'));
    const storage = memoryStorage({ clock });
    const state = { loseNextReply: false };
    const requests = {
      ...storage.requests,
      updateRequest: async (...write: Parameters<typeof storage.requests.updateRequest>) => {
        const stored = await storage.requests.updateRequest(...write);
        if (!state.loseNextReply) return stored;
        state.loseNextReply = false;
        throw new NotifyError('unavailable', 'Storage is temporarily unavailable');
      },
    };
    const notifier = createNotifier({
      storage: { ...storage, requests },
      clock,
      transports: [inboxTransport({ clock })],
    });
    await notifier.seed(testSeed);
    const requestId = await sendInteractive(notifier, ['bob@acme.test'], 30);
    const bobsCopy = async () => (await inboxOf(notifier, 'bob@acme.test'))[0];
    return { clock, storage, notifier, state, requestId, bobsCopy };
  }

  it('a click whose answer was lost: its copy shows it once the refresh its write pledged runs', async () => {
    const { clock, storage, notifier, state, requestId, bobsCopy } = await setupLosingReplies();
    state.loseNextReply = true;
    await expect(notifier.click({ requestId, recipient: 'bob@acme.test', value: 'yes' })).rejects.toThrow(
      'unavailable',
    );
    expect((await storage.requests.getRequest(requestId))?.status).toBe('finished');
    expect((await bobsCopy())?.selected).toBeNull();
    clock.advance(pledgedRefreshDelayMs + 1_000);
    expect(await notifier.runDueWork()).toBeGreaterThan(0);
    const copy = await bobsCopy();
    expect(copy?.selected).toBe('yes');
    expect(copy?.buttons.every((button) => button.disabled)).toBe(true);
    await notifier.stop();
  });

  it('a timeout whose answer was lost: the copies lose their buttons once the timeout runs again, after the delay of a pledge', async () => {
    const { clock, storage, notifier, state, requestId, bobsCopy } = await setupLosingReplies();
    state.loseNextReply = true;
    clock.advance(30 * 60_000);
    await notifier.runDueWork();
    expect((await storage.requests.getRequest(requestId))?.status).toBe('finished');
    const stillOpen = async () => (await bobsCopy())?.buttons.some((button) => !button.disabled);
    expect(await stillOpen()).toBe(true);
    // The timeout's item, still leased by the run that lost its answer, comes back at the lease's
    // end, finds its request finished and waits as long as a pledge does, in case that run was only
    // slow; then the copies are brought up to date.
    clock.advance(60_000);
    expect(await notifier.runDueWork()).toBe(1);
    expect(await stillOpen()).toBe(true);
    clock.advance(pledgedRefreshDelayMs);
    expect(await notifier.runDueWork()).toBe(1);
    expect(await stillOpen()).toBe(false);
    expect(await storage.dueWork.nextRunAt()).toBeNull();
    await notifier.stop();
  });

  it('a write answered as usual cancels the refresh it pledged: nothing is left to run', async () => {
    const { clock, storage, notifier, requestId } = await setupLosingReplies();
    expect(await notifier.click({ requestId, recipient: 'bob@acme.test', value: 'yes' })).toBe('accepted');
    clock.advance(pledgedRefreshDelayMs + 1_000);
    expect(await storage.dueWork.nextRunAt()).toBeNull();
    expect(await notifier.runDueWork()).toBe(0);
    await notifier.stop();
  });
});

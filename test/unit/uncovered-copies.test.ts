import { describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { NotifyError, type StoragePorts } from '../../core/adapter-kit.js';
import { createNotifier } from '../../core/index.js';
import { inboxOf, readStatus } from '../support/api-requests.js';
import { capturingLogger } from '../support/capturing-logger.js';
import { manualClock } from '../support/manual-clock.js';
import { sendInteractive } from '../support/send-interactive.js';
import { testSeed } from '../support/test-seed.js';

/**
 * Memory storage whose next `blip` reads of copies and schedulings of due work fail, as a store that
 * is down for a moment: a change is stored, its copies are not updated, and the refresh that would
 * update them later cannot be scheduled either.
 */
function blippingStorage(clock: ReturnType<typeof manualClock>) {
  const storage = memoryStorage({ clock });
  const state = { blip: 0 };
  /** Whether this call fails: one of the next `blip`. */
  const failing = () => {
    if (state.blip === 0) return false;
    state.blip -= 1;
    return true;
  };
  const down = () => Promise.reject(new NotifyError('unavailable', 'Storage is temporarily unavailable'));
  const blipping: StoragePorts = {
    ...storage,
    deliveries: {
      ...storage.deliveries,
      listDeliveries: (sendId) => (failing() ? down() : storage.deliveries.listDeliveries(sendId)),
    },
    dueWork: {
      ...storage.dueWork,
      enqueue: (...args) => (failing() ? down() : storage.dueWork.enqueue(...args)),
    },
  };
  return { storage: blipping, state };
}

async function start() {
  const clock = manualClock(Date.parse('2026-03-01T09:00:00.000Z'));
  const { storage, state } = blippingStorage(clock);
  const notifier = createNotifier({
    storage,
    transports: [inboxTransport({ clock })],
    clock,
    logger: capturingLogger(),
  });
  await notifier.seed(testSeed);
  const requestId = await sendInteractive(notifier, ['bob@acme.test'], 1);
  clock.advance(61_000);
  return { notifier, clock, state, requestId };
}

/** Whether Bob's inbox copy still offers buttons. */
const offersButtons = async (notifier: Awaited<ReturnType<typeof start>>['notifier']) =>
  (await inboxOf(notifier, 'bob@acme.test'))[0]?.buttons.some((button) => !button.disabled) ?? false;

/** Bob's copy still offers its buttons now, and no longer once the due work of half an hour ran. */
async function expectButtonsGoneLater({
  notifier,
  clock,
}: Pick<Awaited<ReturnType<typeof start>>, 'notifier' | 'clock'>) {
  expect(await offersButtons(notifier)).toBe(true);
  for (let step = 0; step < 3; step += 1) {
    clock.advance(10 * 60_000);
    await notifier.runDueWork();
  }
  expect(await offersButtons(notifier)).toBe(false);
  await notifier.stop();
}

describe('copies a stored change could neither update nor leave to a refresh', () => {
  it('are updated later by the timeout whose item stays, when the timeout made the change', async () => {
    const { notifier, clock, state } = await start();
    state.blip = 2;
    expect(await notifier.runDueWork()).toBe(1);
    await expectButtonsGoneLater({ notifier, clock });
  });

  it('are updated later by the refresh the write pledged, when a status read past the deadline made it', async () => {
    const { notifier, clock, state, requestId } = await start();
    state.blip = 2;
    expect((await readStatus(notifier, requestId))?.status).toBe(200);
    await expectButtonsGoneLater({ notifier, clock });
  });
});

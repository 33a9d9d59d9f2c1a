import { describe, expect, it } from 'vitest';
import type { InboxMessage } from '../../adapters/chat/inbox/inbox-message.js';
import { inboxMessages } from '../../adapters/chat/inbox/messages.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { createNotifier } from '../../core/notifier.js';
import { manualClock } from '../support/manual-clock.js';

const message = (id: string, deliveredAt: number): InboxMessage => ({
  id,
  recipient: 'bob@acme.test',
  organizationId: 'acme',
  kind: 'plain',
  requestId: null,
  text: id,
  buttons: [],
  buttonsEnabled: false,
  footer: '',
  selected: null,
  deliveredAt,
});

describe('inbox messages with a retention', () => {
  it('lists only the messages of the last retention, and lets the lists of older periods expire', async () => {
    const clock = manualClock();
    const state = memoryStorage({ clock }).transportState;
    const messages = inboxMessages({ state, clock, retentionMs: 1000 });
    const start = clock.now();
    for (let i = 0; i < 50; i += 1) {
      await messages.add(message(`m${i}`, clock.now()), 0);
      clock.advance(100);
    }
    // 50 deliveries 100 ms apart, the clock 100 ms past the last: those of the last second are live, in order.
    const listed = await messages.list('bob@acme.test');
    expect(listed.map((m) => m.id)).toEqual(Array.from({ length: 9 }, (_, i) => `m${41 + i}`));
    // The list of the first period is gone, not merely skipped: an active recipient's index is bounded.
    expect(await state.readList(`recipient:bob@acme.test:${Math.floor(start / 1000)}`)).toEqual([]);
  });

  it('keeps everything, in one list, without a retention', async () => {
    const clock = manualClock();
    const state = memoryStorage({ clock }).transportState;
    const messages = inboxMessages({ state, clock });
    await messages.add(message('old', clock.now()), 0);
    clock.advance(365 * 24 * 3_600_000);
    await messages.add(message('new', clock.now()), 0);
    expect((await messages.list('bob@acme.test')).map((m) => m.id)).toEqual(['old', 'new']);
    expect(await state.readList('recipient:bob@acme.test')).toEqual(['old', 'new']);
  });
});

describe('createNotifier retention', () => {
  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])('refuses a retention of %s ms', (retention) => {
    expect(() => createNotifier({ storage: memoryStorage(), transports: [], retention })).toThrow(RangeError);
  });

  it('refuses a retention of 0 days', () => {
    expect(() =>
      createNotifier({ storage: memoryStorage(), transports: [], retention: { days: 0 } }),
    ).toThrow(RangeError);
  });
});

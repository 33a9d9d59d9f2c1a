import { describe, expect, it } from 'vitest';
import { type InboxDelivery, inboxMessages } from '../../adapters/chat/inbox/messages.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { createNotifier } from '../../core/notifier.js';
import { manualClock } from '../support/manual-clock.js';

const message = (sendId: string, deliveredAt: number): InboxDelivery => ({
  sendId,
  recipient: 'bob@acme.test',
  organizationId: 'acme',
  kind: 'plain',
  text: sendId,
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
    expect(listed.map((m) => m.text)).toEqual(Array.from({ length: 9 }, (_, i) => `m${41 + i}`));
    // The list of the first period is gone, not merely skipped: an active recipient's index is bounded.
    expect(await state.readList(`recipient:bob@acme.test:${Math.floor(start / 1000)}`)).toEqual([]);
  });

  it('keeps a send as long as its copies change, and a retention after the last change', async () => {
    const clock = manualClock();
    const state = memoryStorage({ clock }).transportState;
    const messages = inboxMessages({ state, clock, retentionMs: 1000 });
    const copy = { sendId: 'req_one', recipient: 'bob@acme.test' };
    await messages.add({ ...message('req_one', clock.now()), kind: 'interactive' }, 1);
    const id = await messages.idOf(copy);
    clock.advance(600);
    await messages.update(copy, 2, { buttons: [], buttonsEnabled: false, footer: 'Expired', selected: null });
    clock.advance(999);
    expect(await messages.get(id)).toMatchObject({ footer: 'Expired' });
    clock.advance(1);
    expect(await state.get('send:req_one')).toBeNull();
    expect(await state.get('copy:req_one:bob@acme.test')).toBeNull();
    expect(await messages.get(id)).toBeNull();
  });

  it('keeps everything, in one list, without a retention', async () => {
    const clock = manualClock();
    const state = memoryStorage({ clock }).transportState;
    const messages = inboxMessages({ state, clock });
    await messages.add(message('old', clock.now()), 0);
    clock.advance(365 * 24 * 3_600_000);
    await messages.add(message('new', clock.now()), 0);
    expect((await messages.list('bob@acme.test')).map((m) => m.text)).toEqual(['old', 'new']);
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

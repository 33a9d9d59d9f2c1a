import { describe, expect, it } from 'vitest';
import { type InboxDelivery, inboxMessages } from '../../adapters/chat/inbox/messages.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import type { TransportStateStore } from '../../core/adapter-kit.js';
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
  openUntil: null,
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
    await messages.update(
      copy,
      2,
      { buttons: [], buttonsEnabled: false, footer: 'Expired', selected: null },
      null,
    );
    clock.advance(999);
    expect(await messages.get(id)).toMatchObject({ footer: 'Expired' });
    clock.advance(1);
    expect(await state.get('send:req_one')).toBeNull();
    expect(await state.get('copy:req_one:bob@acme.test')).toBeNull();
    expect(await messages.get(id)).toBeNull();
  });

  it("lists each copy as long as it lives, and lets a short request's list go long before a day-long one's", async () => {
    const clock = manualClock();
    const store = memoryStorage({ clock }).transportState;
    const lists = new Map<string, string>();
    // The store as it is, but telling which list each send went to.
    const state: TransportStateStore = {
      ...store,
      append: (key, value, options) => {
        lists.set(value, key);
        return store.append(key, value, options);
      },
    };
    const messages = inboxMessages({ state, clock, retentionMs: 1000 });
    const open = (sendId: string, openMs: number): InboxDelivery => ({
      ...message(sendId, clock.now()),
      kind: 'interactive',
      openUntil: clock.now() + openMs,
    });
    const expired = { buttons: [], buttonsEnabled: false, footer: 'Expired', selected: null };
    await messages.add(message('plain-before', clock.now()), 0);
    clock.advance(1);
    await messages.add(open('req_short', 5_000), 1);
    clock.advance(1);
    await messages.add(open('req_long', 24 * 3_600_000), 1);
    clock.advance(1);
    await messages.add(message('plain-after', clock.now()), 0);
    const texts = async (): Promise<string[]> => (await messages.list('bob@acme.test')).map((m) => m.text);
    expect(await texts()).toEqual(['plain-before', 'req_short', 'req_long', 'plain-after']);

    // Open, each copy outlives the retention; the short one finishes at its timeout.
    clock.advance(4_997);
    expect(await texts()).toEqual(['req_short', 'req_long']);
    await messages.update({ sendId: 'req_short', recipient: 'bob@acme.test' }, 2, expired, null);
    clock.advance(999);
    expect(await texts()).toEqual(['req_short', 'req_long']);
    clock.advance(1);
    expect(await texts()).toEqual(['req_long']);

    // Its list holds a few times what the short request needed (5 s, plus a minute for a late
    // finish), not the day the long one needs.
    clock.advance(2 * (1000 + 2 * 65_000));
    expect(await store.readList(lists.get('req_short')!)).toEqual([]);
    expect(await store.readList(lists.get('req_long')!)).toEqual(['req_long']);
    clock.advance(24 * 3_600_000 - 2 * (1000 + 2 * 65_000) - 6_000);
    expect(await texts()).toEqual(['req_long']);
    await messages.update({ sendId: 'req_long', recipient: 'bob@acme.test' }, 2, expired, null);
    clock.advance(999);
    expect(await texts()).toEqual(['req_long']);
    clock.advance(1);
    expect(await texts()).toEqual([]);
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

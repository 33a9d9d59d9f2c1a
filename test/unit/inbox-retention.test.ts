import { describe, expect, it } from 'vitest';
import { type InboxDelivery, inboxMessages, type Term } from '../../adapters/chat/inbox/messages.js';
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
  term: plain,
});

const plain: Term = { expiresAt: null, open: false };
/** A request that times out at `expiresAt`, open or finished. */
const open = (expiresAt: number): Term => ({ expiresAt, open: true });
const finished = (expiresAt: number): Term => ({ expiresAt, open: false });
const expiredView = { buttons: [], buttonsEnabled: false, footer: 'Expired', selected: null };
const bob = (sendId: string) => ({ sendId, recipient: 'bob@acme.test' });

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
    await messages.update(copy, 2, expiredView, finished(clock.now()));
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
    const interactive = (sendId: string, openMs: number): InboxDelivery => ({
      ...message(sendId, clock.now()),
      kind: 'interactive',
      term: open(clock.now() + openMs),
    });
    await messages.add(message('plain-before', clock.now()), 0);
    clock.advance(1);
    const shortEnds = clock.now() + 5_000;
    await messages.add(interactive('req_short', 5_000), 1);
    clock.advance(1);
    const longEnds = clock.now() + 24 * 3_600_000;
    await messages.add(interactive('req_long', 24 * 3_600_000), 1);
    clock.advance(1);
    await messages.add(message('plain-after', clock.now()), 0);
    const texts = async (): Promise<string[]> => (await messages.list('bob@acme.test')).map((m) => m.text);
    expect(await texts()).toEqual(['plain-before', 'req_short', 'req_long', 'plain-after']);

    // Open, each copy outlives the retention; the short one finishes at its timeout.
    clock.advance(4_997);
    expect(await texts()).toEqual(['req_short', 'req_long']);
    await messages.update(bob('req_short'), 2, expiredView, finished(shortEnds));
    clock.advance(999);
    expect(await texts()).toEqual(['req_short', 'req_long']);
    clock.advance(1);
    expect(await texts()).toEqual(['req_long']);

    // Its list holds a few times what the short request needed (5 s, plus a minute for a late
    // finish), not the day the long one needs.
    clock.advance(2 * (1000 + 2 * 65_000));
    expect(await store.readList(lists.get('req_short')!)).toEqual([]);
    expect(await store.readList(lists.get('req_long')!)).toEqual(['req_long']);
    clock.set(longEnds);
    expect(await texts()).toEqual(['req_long']);
    // Its timeout, waiting behind other due work, finishes it most of a minute late.
    clock.advance(59_000);
    await messages.update(bob('req_long'), 2, expiredView, finished(longEnds));
    clock.advance(999);
    expect(await texts()).toEqual(['req_long']);
    clock.advance(1);
    expect(await texts()).toEqual([]);
  });

  it('lists the copies of a request that finished later than a minute after its timeout anew, for a retention', async () => {
    const clock = manualClock();
    const messages = inboxMessages({
      state: memoryStorage({ clock }).transportState,
      clock,
      retentionMs: 1000,
    });
    const timeout = clock.now() + 60_000;
    await messages.add({ ...message('req_late', clock.now()), kind: 'interactive', term: open(timeout) }, 1);
    // The instance that ran the timeout stopped; another took it over once its lease ran out, and
    // its first update of the copy failed: the refresh two minutes later is the one that lands.
    clock.set(timeout + 3 * 60_000);
    expect(await messages.update(bob('req_late'), 2, expiredView, finished(timeout))).toBe(true);
    clock.advance(999);
    expect((await messages.list('bob@acme.test')).map((m) => m.footer)).toEqual(['Expired']);
    clock.advance(1);
    expect(await messages.list('bob@acme.test')).toEqual([]);
  });

  it("keeps an open request's copies open when their views change before the timeout", async () => {
    const clock = manualClock();
    const state = memoryStorage({ clock }).transportState;
    const messages = inboxMessages({ state, clock, retentionMs: 1000 });
    const timeout = clock.now() + 60_000;
    const shown = { buttons: [], buttonsEnabled: true, footer: 'Open', selected: null };
    await messages.add({ ...message('req_open', clock.now()), kind: 'interactive', term: open(timeout) }, 1);
    await state.set('msg:msg_AAAAAAAAAAAAAAAAAAAAAAAA', JSON.stringify({ version: 1, message: {} }));
    // A refresh of the shared view, and an update of a copy an earlier release delivered.
    clock.advance(10_000);
    expect(await messages.update(bob('req_open'), 2, { ...shown, footer: 'Refreshed' }, open(timeout))).toBe(
      true,
    );
    expect(await messages.update('msg_AAAAAAAAAAAAAAAAAAAAAAAA', 2, shown, open(timeout))).toBe(true);
    clock.set(timeout);
    expect((await messages.list('bob@acme.test')).map((m) => m.footer)).toEqual(['Refreshed']);
    expect(await state.get('msg:msg_AAAAAAAAAAAAAAAAAAAAAAAA')).not.toBeNull();
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

describe('inbox messages under instances of different retentions', () => {
  const day = 24 * 3600_000;
  const flush = () => new Promise((resolve) => setImmediate(resolve));

  it('lists what an instance of another retention delivered, an open request until its timeout', async () => {
    const clock = manualClock();
    const state = memoryStorage({ clock }).transportState;
    const before = inboxMessages({ state, clock, retentionMs: 30 * day });
    const timeout = clock.now() + 3 * day;
    await before.add({ ...message('req_open', clock.now()), kind: 'interactive', term: open(timeout) }, 1);
    clock.advance(1);
    await before.add(message('notif_plain', clock.now()), 0);
    clock.advance(1);
    await flush();

    // The service starts again with a retention of a week: a new process, lists of other names.
    const after = inboxMessages({ state, clock, retentionMs: 7 * day });
    expect((await after.list('bob@acme.test')).map((m) => m.text)).toEqual(['req_open', 'notif_plain']);
    await after.add(message('notif_after', clock.now()), 0);
    await flush();
    expect((await before.list('bob@acme.test')).map((m) => m.text)).toEqual([
      'req_open',
      'notif_plain',
      'notif_after',
    ]);
    // Two days on, the request is still open and listed; a week on, the plain send of the new
    // retention has gone as its record did, the one of the old retention stays for its 30 days.
    clock.advance(2 * day);
    expect((await after.list('bob@acme.test')).map((m) => m.text)).toEqual([
      'req_open',
      'notif_plain',
      'notif_after',
    ]);
    clock.advance(6 * day);
    expect((await after.list('bob@acme.test')).map((m) => m.text)).toEqual(['req_open', 'notif_plain']);
  });

  it('lists a copy that an instance of another retention listed anew, before it delivered anything', async () => {
    const clock = manualClock();
    const state = memoryStorage({ clock }).transportState;
    const hourly = inboxMessages({ state, clock, retentionMs: 3600_000 });
    const timeout = clock.now() + 30 * 60_000;
    await hourly.add({ ...message('req_late', clock.now()), kind: 'interactive', term: open(timeout) }, 1);
    // An instance of a month's retention, fresh, runs the timeout three hours late: it lists the copy anew.
    const monthly = inboxMessages({ state, clock, retentionMs: 30 * day });
    clock.set(timeout + 3 * 3600_000);
    expect(await monthly.update(bob('req_late'), 2, expiredView, finished(timeout))).toBe(true);
    expect((await hourly.list('bob@acme.test')).map((m) => m.footer)).toEqual(['Expired']);
    expect((await monthly.list('bob@acme.test')).map((m) => m.footer)).toEqual(['Expired']);
  });

  it('lets no delivery of a process end before its first saying of its retention has landed', async () => {
    const clock = manualClock();
    const stored = memoryStorage({ clock }).transportState;
    let release = () => {};
    const slow = new Promise<void>((resolve) => {
      release = resolve;
    });
    // A store slow to answer for the record of retentions only.
    const state = {
      ...stored,
      get: async (key: string) => {
        if (key === 'retentions') await slow;
        return stored.get(key);
      },
    };
    const hourly = inboxMessages({ state, clock, retentionMs: 3600_000 });
    const delivered: string[] = [];
    const first = hourly.add(message('notif_a', clock.now()), 0).then(() => delivered.push('a'));
    const second = hourly.add(message('notif_b', clock.now() + 1), 0).then(() => delivered.push('b'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(delivered).toEqual([]);
    release();
    await Promise.all([first, second]);
    const monthly = inboxMessages({ state: stored, clock, retentionMs: 30 * day });
    expect((await monthly.list('bob@acme.test')).map((m) => m.text)).toEqual(['notif_a', 'notif_b']);
  });

  it('forgets a retention no process said for longer than its lists may hold a live message', async () => {
    const clock = manualClock();
    const state = memoryStorage({ clock }).transportState;
    const short = inboxMessages({ state, clock, retentionMs: 1000 });
    await short.add(message('notif_short', clock.now()), 0);
    await flush();
    expect((await state.get('retentions'))?.value).toContain('[1000,');
    clock.advance(2 * (1000 + 7 * day + 60_000) + 3600_000);
    const other = inboxMessages({ state, clock, retentionMs: 30 * day });
    await other.add(message('notif_other', clock.now()), 0);
    await flush();
    expect(JSON.parse((await state.get('retentions'))?.value ?? '[]')).toEqual([[30 * day, clock.now()]]);
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

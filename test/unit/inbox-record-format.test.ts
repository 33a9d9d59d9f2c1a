import { describe, expect, it } from 'vitest';
import type { Copy } from '../../adapters/chat/inbox/copy-ids.js';
import type { InboxMessage } from '../../adapters/chat/inbox/inbox-message.js';
import { type InboxDelivery, inboxMessages, type Term } from '../../adapters/chat/inbox/messages.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { manualClock } from '../support/manual-clock.js';

const sendId = 'req_AAAAAAAAAAAAAAAAAAAAAAAA';
/** Without a retention, how long a copy may change changes nothing it keeps. */
const term: Term = { expiresAt: null, open: false };

const interactive: InboxDelivery = {
  sendId,
  kind: 'interactive',
  recipient: 'bob@acme.test',
  organizationId: 'acme',
  text: 'Deploy *v2*?',
  buttons: [
    { text: 'Yes', value: 'yes' },
    { text: 'No', value: 'no' },
  ],
  buttonsEnabled: true,
  footer: 'Please answer within 30 minutes · Sent by Alice',
  selected: null,
  deliveredAt: 1_000,
  term,
};

const answered = {
  buttons: interactive.buttons,
  buttonsEnabled: false,
  footer: 'You answered “Yes” · Sent by Alice',
  selected: 'yes',
};

const copyOf = ({ sendId: id, recipient }: InboxDelivery): Copy => ({ sendId: id, recipient });

/** The message a copy delivered as `delivery` shows under `id`. */
const shownAs = (
  id: string,
  { sendId: requestId, kind, term: _, ...fields }: InboxDelivery,
): InboxMessage => ({
  ...fields,
  id,
  kind,
  requestId: kind === 'interactive' ? requestId : null,
});

const setup = () => {
  const clock = manualClock();
  const state = memoryStorage({ clock }).transportState;
  const messages = inboxMessages({ state, clock });
  /** The message the inbox shows for a copy delivered as `delivery`. */
  const messageOf = async (delivery: InboxDelivery): Promise<InboxMessage> =>
    shownAs(await messages.idOf(copyOf(delivery)), delivery);
  /** Delivers `delivery` showing the view of `version`, and answers the id it is listed under. */
  const add = async (delivery: InboxDelivery, version: number): Promise<string> => {
    await messages.add(delivery, version);
    return messages.idOf(copyOf(delivery));
  };
  return { state, messages, messageOf, add };
};

describe('inbox message records', () => {
  it('reads back every field of a message as it was delivered, plain and interactive', async () => {
    const { messages, messageOf, add } = setup();
    const plain: InboxDelivery = {
      ...interactive,
      sendId: 'notif_BBBBBBBBBBBBBBBBBBBBBBBB',
      kind: 'plain',
      buttons: [],
      buttonsEnabled: false,
      footer: null,
    };
    const id = await add(interactive, 0);
    await add(plain, 0);
    expect(await messages.get(id)).toEqual(await messageOf(interactive));
    expect(await messages.list('bob@acme.test')).toEqual([
      await messageOf(interactive),
      await messageOf(plain),
    ]);
  });

  it('keeps one record for the copies of a send until a copy shows a view of its own', async () => {
    const { state, messages, messageOf, add } = setup();
    const recipients = ['bob@acme.test', 'carol@acme.test', 'dave@acme.test'];
    const ids = await Promise.all(recipients.map((recipient) => add({ ...interactive, recipient }, 1)));
    expect(await state.get(`send:${sendId}`)).not.toBeNull();
    for (const recipient of recipients) expect(await state.get(`copy:${sendId}:${recipient}`)).toBeNull();

    expect(await messages.update({ sendId, recipient: 'carol@acme.test' }, 2, answered, term)).toBe(true);
    expect(await state.get(`copy:${sendId}:carol@acme.test`)).not.toBeNull();
    expect(await state.get(`copy:${sendId}:bob@acme.test`)).toBeNull();
    expect(await messages.get(ids[0]!)).toEqual(await messageOf(interactive));
    expect(await messages.get(ids[1]!)).toEqual({
      ...(await messageOf({ ...interactive, recipient: 'carol@acme.test' })),
      ...answered,
    });
  });

  it('keeps each copy its own view on a store that runs a read before an earlier write (as MongoDB may)', async () => {
    const clock = manualClock();
    const inner = memoryStorage({ clock }).transportState;
    const state = {
      ...inner,
      compareAndSet: async (...args: Parameters<typeof inner.compareAndSet>) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        return inner.compareAndSet(...args);
      },
    };
    const messages = inboxMessages({ state, clock });
    const carol = { ...interactive, recipient: 'carol@acme.test', footer: 'You chose', selected: 'yes' };
    const dave = { ...interactive, recipient: 'dave@acme.test' };
    await Promise.all([messages.add(interactive, 1), messages.add(carol, 2), messages.add(dave, 1)]);
    const footers = await Promise.all(
      [interactive, carol, dave].map(
        async (delivery) => (await messages.get(await messages.idOf(copyOf(delivery))))?.footer,
      ),
    );
    expect(footers).toEqual([interactive.footer, 'You chose', interactive.footer]);
    expect(await inner.get(`copy:${sendId}:dave@acme.test`)).toBeNull();
  });

  it('shows the copies without a choice one view, written once when the request changes', async () => {
    const clock = manualClock();
    const inner = memoryStorage({ clock }).transportState;
    let writes = 0;
    const state = {
      ...inner,
      compareAndSet: (...args: Parameters<typeof inner.compareAndSet>) => {
        writes += 1;
        return inner.compareAndSet(...args);
      },
    };
    const messages = inboxMessages({ state, clock });
    const recipients = ['bob@acme.test', 'carol@acme.test', 'dave@acme.test'];
    await Promise.all(recipients.map((recipient) => messages.add({ ...interactive, recipient }, 1)));
    const expired = { ...answered, footer: 'Expired without your answer', selected: null };
    writes = 0;
    const updated = await Promise.all(
      recipients.map((recipient) => messages.update({ sendId, recipient }, 2, expired, term)),
    );
    expect(updated).toEqual([true, true, true]);
    expect(writes).toBe(1);
    for (const recipient of recipients) {
      expect(await inner.get(`copy:${sendId}:${recipient}`)).toBeNull();
      const id = await messages.idOf({ sendId, recipient });
      expect(await messages.get(id)).toMatchObject({ recipient, ...expired });
    }
    expect(await messages.update({ sendId, recipient: 'bob@acme.test' }, 1, interactive, term)).toBe(true);
    expect((await messages.get(await messages.idOf({ sendId, recipient: 'bob@acme.test' })))?.footer).toBe(
      expired.footer,
    );
  });

  it('keeps the shared view a copy with a choice did not read when its update renews the send', async () => {
    const clock = manualClock();
    const messages = inboxMessages({
      state: memoryStorage({ clock }).transportState,
      clock,
      retentionMs: 60_000,
    });
    const recipients = ['bob@acme.test', 'carol@acme.test'];
    await Promise.all(recipients.map((recipient) => messages.add({ ...interactive, recipient }, 1)));
    const ids = await Promise.all(recipients.map((recipient) => messages.idOf({ sendId, recipient })));
    const expired = { ...answered, footer: 'Expired without your answer', selected: null };
    const closed = { ...answered, footer: 'Closed. Your answer: “Yes”' };
    await Promise.all([
      messages.update({ sendId, recipient: 'bob@acme.test' }, 3, expired, term),
      messages.update({ sendId, recipient: 'carol@acme.test' }, 3, closed, term),
    ]);
    expect(await messages.get(ids[0]!)).toMatchObject(expired);
    expect(await messages.get(ids[1]!)).toMatchObject(closed);
  });

  it('applies an update to what the view changes and keeps the rest, and ignores an older view', async () => {
    const { messages, messageOf, add } = setup();
    const id = await add(interactive, 0);
    expect(await messages.update(copyOf(interactive), 2, answered, term)).toBe(true);
    expect(await messages.update(copyOf(interactive), 1, { ...answered, footer: 'older' }, term)).toBe(true);
    expect(await messages.get(id)).toEqual({ ...(await messageOf(interactive)), ...answered });
  });

  it('ignores an update older than the view the copy was delivered with', async () => {
    const { messages, messageOf, add } = setup();
    const id = await add(interactive, 5);
    expect(await messages.update(copyOf(interactive), 4, answered, term)).toBe(true);
    expect(await messages.get(id)).toEqual(await messageOf(interactive));
  });

  it.each([
    ['quotes and backslashes', 'a"b\\c\\"d', 'org"\\', 'Say "yes", \\or\\ [no]'],
    ['escapes JSON writes as \\u', 'x\u0000y\u001f', 'o\u2028rg', 'line\nbreak\ttab\u007f'],
    ['commas and brackets', 'a,b]@acme.test', '[acme],', '],[",",null,'],
    ['text beyond the basic plane', 'bób@ácme.test', 'acmé', 'Déployer 🚀 « v2 » ?'],
  ])(
    'keeps a send and an update with %s exactly as their fields encode',
    async (_name, recipient, organizationId, text) => {
      const { state, messages, messageOf, add } = setup();
      const delivery: InboxDelivery = { ...interactive, recipient, organizationId, text };
      const id = await add(delivery, 0);
      const shown = { ...answered, footer: 'You answered “a\\"b” · Sent by Alice', selected: 'x"y' };
      expect(await messages.update(copyOf(delivery), 3, shown, term)).toBe(true);
      expect((await state.get(`send:${sendId}`))?.value.split('\n')[0]).toBe(
        JSON.stringify([organizationId, 1, text, delivery.deliveredAt]),
      );
      expect((await state.get(`copy:${sendId}:${recipient}`))?.value).toBe(
        JSON.stringify([3, ['Yes', 'yes', 'No', 'no'], 0, shown.footer, shown.selected]),
      );
      const expected = { ...(await messageOf(delivery)), ...shown };
      expect(await messages.get(id)).toEqual(expected);
      expect(await messages.list(recipient)).toEqual([expected]);
      expect(await messages.update(copyOf(delivery), 2, answered, term)).toBe(true);
      expect(await messages.get(id)).toEqual(expected);
    },
  );

  it('compares versions of more than one digit as numbers', async () => {
    const { messages, messageOf, add } = setup();
    const id = await add(interactive, 10);
    expect(await messages.update(copyOf(interactive), 9, answered, term)).toBe(true);
    expect(await messages.get(id)).toEqual(await messageOf(interactive));
    expect(await messages.update(copyOf(interactive), 12, answered, term)).toBe(true);
    expect(await messages.update(copyOf(interactive), 11, interactive, term)).toBe(true);
    expect(await messages.get(id)).toEqual({ ...(await messageOf(interactive)), ...answered });
  });

  it('answers false for an update of a copy whose send it does not have', async () => {
    const { messages } = setup();
    expect(await messages.update(copyOf(interactive), 1, answered, term)).toBe(false);
    expect(await messages.update('msg_AAAAAAAAAAAAAAAAAAAAAAAA', 1, answered, term)).toBe(false);
  });
});

describe('inbox message ids', () => {
  it('names the send and recipient, signed, and finds nothing under an id it did not make', async () => {
    const { messages, add } = setup();
    const id = await add(interactive, 1);
    expect(id).toMatch(/^msg_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(await messages.get(id)).not.toBeNull();

    const [encoded = '', tag = ''] = id.slice(4).split('.');
    const forged = Buffer.from(`${sendId}\ncarol@acme.test`).toString('base64url');
    for (const madeUp of [
      `msg_${forged}.${tag}`,
      `msg_${encoded}.${'A'.repeat(22)}`,
      `msg_${encoded}`,
      `${id}=`,
      'msg_',
      'req_x',
    ]) {
      expect(await messages.get(madeUp)).toBeNull();
    }
  });

  it('makes the same id on every instance over one store, and another on another store', async () => {
    const clock = manualClock();
    const state = memoryStorage({ clock }).transportState;
    const [one, two] = [inboxMessages({ state, clock }), inboxMessages({ state, clock })];
    const ids = await Promise.all([one.idOf(copyOf(interactive)), two.idOf(copyOf(interactive))]);
    expect(ids[0]).toBe(ids[1]);
    const elsewhere = inboxMessages({ state: memoryStorage({ clock }).transportState, clock });
    expect(await elsewhere.idOf(copyOf(interactive))).not.toBe(ids[0]);
  });
});

describe('inbox send records naming their request, as the release before wrote them', () => {
  it.each([
    ['an interactive send, by its request id', interactive, sendId],
    [
      'a plain send, by null',
      { ...interactive, kind: 'plain', buttons: [], buttonsEnabled: false, footer: null },
      null,
    ],
  ] satisfies [string, InboxDelivery, string | null][])(
    'reads %s, and updates it keeping that line',
    async (_name, delivery, named) => {
      const { state, messages, messageOf, add } = setup();
      const id = await add(delivery, 1);
      const [first = '', shown = ''] = (await state.get(`send:${sendId}`))?.value.split('\n') ?? [];
      const earlier = JSON.stringify([delivery.organizationId, named, delivery.text, delivery.deliveredAt]);
      expect(first).toBe(
        JSON.stringify([
          delivery.organizationId,
          named === null ? 0 : 1,
          delivery.text,
          delivery.deliveredAt,
        ]),
      );
      await state.set(`send:${sendId}`, `${earlier}\n${shown}`);
      expect(await messages.get(id)).toEqual(await messageOf(delivery));
      expect(await messages.list(delivery.recipient)).toEqual([await messageOf(delivery)]);
      const timedOut = { ...delivery, buttonsEnabled: false, footer: 'Expired' };
      expect(await messages.update(copyOf(delivery), 2, timedOut, term)).toBe(true);
      expect(await messages.get(id)).toEqual(await messageOf(timedOut));
      expect((await state.get(`send:${sendId}`))?.value.split('\n')[0]).toBe(earlier);
    },
  );
});

describe('inbox records of one message each, written by earlier releases', () => {
  const id = 'msg_AAAAAAAAAAAAAAAAAAAAAAAA';
  const earlier = shownAs(id, interactive);
  const kept = JSON.stringify(['bob@acme.test', 'acme', sendId, interactive.text, 1_000]);
  const flat = ['Yes', 'yes', 'No', 'no'];

  it.each([
    ['the object form of the first releases', JSON.stringify({ version: 1, message: earlier })],
    [
      'the one-line array form',
      JSON.stringify([
        1,
        'bob@acme.test',
        'acme',
        sendId,
        interactive.text,
        flat,
        1,
        interactive.footer,
        null,
        1_000,
      ]),
    ],
    ['the two-line form', `${kept}\n${JSON.stringify([1, flat, 1, interactive.footer, null])}`],
  ])('reads and updates a record in %s, rewriting it in the two-line form', async (_form, legacy) => {
    const { state, messages, messageOf, add } = setup();
    await state.set(`msg:${id}`, legacy);
    await state.append('recipient:bob@acme.test', id);
    const current = await add({ ...interactive, sendId: 'req_BBBBBBBBBBBBBBBBBBBBBBBB' }, 0);
    const delivered = await messageOf({ ...interactive, sendId: 'req_BBBBBBBBBBBBBBBBBBBBBBBB' });
    expect(await messages.list('bob@acme.test')).toEqual([earlier, delivered]);
    expect(await messages.get(id)).toEqual(earlier);

    expect(await messages.update(id, 0, answered, term)).toBe(true);
    expect((await state.get(`msg:${id}`))?.value).toBe(legacy);
    expect(await messages.update(id, 2, answered, term)).toBe(true);
    expect(await messages.get(id)).toEqual({ ...earlier, ...answered });
    expect((await state.get(`msg:${id}`))?.value.split('\n')).toEqual([
      kept,
      JSON.stringify([2, flat, 0, answered.footer, answered.selected]),
    ]);
    expect(await messages.update(id, 1, earlier, term)).toBe(true);
    expect(await messages.get(id)).toEqual({ ...earlier, ...answered });
    expect(await messages.get(current)).toEqual(delivered);
  });

  it('answers false for an update of an earlier id without a record', async () => {
    const { messages } = setup();
    expect(await messages.update(id, 1, answered, term)).toBe(false);
    expect(await messages.get(id)).toBeNull();
  });
});

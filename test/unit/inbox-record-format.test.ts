import { describe, expect, it } from 'vitest';
import type { InboxMessage } from '../../adapters/chat/inbox/inbox-message.js';
import { inboxMessages } from '../../adapters/chat/inbox/messages.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { manualClock } from '../support/manual-clock.js';

const interactive: InboxMessage = {
  id: 'msg_AAAAAAAAAAAAAAAAAAAAAAAA',
  recipient: 'bob@acme.test',
  organizationId: 'acme',
  kind: 'interactive',
  requestId: 'req_AAAAAAAAAAAAAAAAAAAAAAAA',
  text: 'Deploy *v2*?',
  buttons: [
    { text: 'Yes', value: 'yes' },
    { text: 'No', value: 'no' },
  ],
  buttonsEnabled: true,
  footer: 'Please answer within 30 minutes · Sent by Alice',
  selected: null,
  deliveredAt: 1_000,
};

const answered = {
  buttons: interactive.buttons,
  buttonsEnabled: false,
  footer: 'You answered “Yes” · Sent by Alice',
  selected: 'yes',
};

const setup = () => {
  const clock = manualClock();
  const state = memoryStorage({ clock }).transportState;
  return { state, messages: inboxMessages({ state, clock }) };
};

describe('inbox message records', () => {
  it('reads back every field of a message as it was delivered, plain and interactive', async () => {
    const { messages } = setup();
    const plain: InboxMessage = {
      ...interactive,
      id: 'msg_BBBBBBBBBBBBBBBBBBBBBBBB',
      kind: 'plain',
      requestId: null,
      buttons: [],
      buttonsEnabled: false,
      footer: null,
    };
    await messages.add(interactive, 0);
    await messages.add(plain, 0);
    expect(await messages.get(interactive.id)).toEqual(interactive);
    expect(await messages.list('bob@acme.test')).toEqual([interactive, plain]);
  });

  it('applies an update to what the view changes and keeps the rest, and ignores an older view', async () => {
    const { messages } = setup();
    await messages.add(interactive, 0);
    expect(await messages.update(interactive.id, 2, answered)).toBe(true);
    expect(await messages.update(interactive.id, 1, { ...answered, footer: 'older' })).toBe(true);
    expect(await messages.get(interactive.id)).toEqual({ ...interactive, ...answered });
  });

  it.each([
    ['quotes and backslashes', 'a"b\\c\\"d', 'org"\\', 'Say "yes", \\or\\ [no]'],
    ['escapes JSON writes as \\u', 'x\u0000y\u001f', 'o\u2028rg', 'line\nbreak\ttab\u007f'],
    ['commas and brackets', 'a,b]@acme.test', '[acme],', '],[",",null,'],
    ['text beyond the basic plane', 'bób@ácme.test', 'acmé', 'Déployer 🚀 « v2 » ?'],
  ])(
    'rewrites a record with %s in its kept fields to exactly what the whole record would be',
    async (_name, recipient, organizationId, text) => {
      const { state, messages } = setup();
      const message: InboxMessage = { ...interactive, recipient, organizationId, text };
      await messages.add(message, 0);
      const shown = { ...answered, footer: 'You answered “a\\"b” · Sent by Alice', selected: 'x"y' };
      expect(await messages.update(message.id, 3, shown)).toBe(true);
      expect((await state.get(`msg:${message.id}`))?.value).toBe(
        `${JSON.stringify([recipient, organizationId, message.requestId, text, message.deliveredAt])}\n${JSON.stringify(
          [3, ['Yes', 'yes', 'No', 'no'], 0, shown.footer, shown.selected],
        )}`,
      );
      expect(await messages.get(message.id)).toEqual({ ...message, ...shown });
      expect(await messages.update(message.id, 2, answered)).toBe(true);
      expect(await messages.get(message.id)).toEqual({ ...message, ...shown });
    },
  );

  it('rewrites a record without a request id (null) as the whole record would be', async () => {
    const { state, messages } = setup();
    const message: InboxMessage = { ...interactive, requestId: null };
    await messages.add(message, 0);
    expect(await messages.update(message.id, 1, answered)).toBe(true);
    const [kept] = (await state.get(`msg:${message.id}`))?.value.split('\n') ?? [];
    const [, , requestId, text] = JSON.parse(kept ?? '[]') as unknown[];
    expect([requestId, text]).toEqual([null, message.text]);
    expect(await messages.get(message.id)).toEqual({ ...message, kind: 'plain', ...answered });
  });

  it.each([
    ['the object form of the first releases', JSON.stringify({ version: 1, message: interactive })],
    [
      'the one-line array form of the release before',
      JSON.stringify([
        1,
        'bob@acme.test',
        'acme',
        interactive.requestId,
        interactive.text,
        ['Yes', 'yes', 'No', 'no'],
        1,
        interactive.footer,
        null,
        1_000,
      ]),
    ],
  ])('reads and updates a record in %s, rewriting it in the current form', async (_form, legacy) => {
    const { state, messages } = setup();
    await state.set(`msg:${interactive.id}`, legacy);
    await state.append('recipient:bob@acme.test', interactive.id);
    expect(await messages.list('bob@acme.test')).toEqual([interactive]);
    expect(await messages.get(interactive.id)).toEqual(interactive);

    expect(await messages.update(interactive.id, 0, answered)).toBe(true);
    expect((await state.get(`msg:${interactive.id}`))?.value).toBe(legacy);
    expect(await messages.update(interactive.id, 2, answered)).toBe(true);
    expect(await messages.get(interactive.id)).toEqual({ ...interactive, ...answered });
    expect((await state.get(`msg:${interactive.id}`))?.value.split('\n')).toHaveLength(2);
    expect(await messages.update(interactive.id, 1, interactive)).toBe(true);
    expect(await messages.get(interactive.id)).toEqual({ ...interactive, ...answered });
  });

  it('compares versions of more than one digit as numbers', async () => {
    const { messages } = setup();
    await messages.add(interactive, 10);
    expect(await messages.update(interactive.id, 9, answered)).toBe(true);
    expect(await messages.get(interactive.id)).toEqual(interactive);
    expect(await messages.update(interactive.id, 12, answered)).toBe(true);
    expect(await messages.update(interactive.id, 11, interactive)).toBe(true);
    expect(await messages.get(interactive.id)).toEqual({ ...interactive, ...answered });
  });

  it('answers false for an update of a message that does not exist', async () => {
    const { messages } = setup();
    expect(await messages.update('msg_missing', 1, answered)).toBe(false);
  });
});

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  adaptiveCard,
  cardInvokeResponse,
  cardMessage,
  errorInvokeResponse,
  maxCardBytes,
} from '../../adapters/chat/teams/card.js';
import type { MessageView } from '../../core/domain/message-view.js';
import { plainView, requestView } from '../../core/request/message-view.js';
import { adaptiveCardProblems } from '../support/fake-bot-connector.js';
import {
  sampleCreatedAt,
  sampleRecipient,
  sampleRecipientState,
  sampleRequest,
} from '../support/sample-request.js';

const createdAt = sampleCreatedAt;
const bob = sampleRecipient;
const recipient = sampleRecipientState;
const request = sampleRequest;

const finished = { status: 'finished' as const, finishedAt: createdAt + 60 * 60_000 };

const views: Record<string, MessageView> = {
  plain: plainView(
    'notif_0123456789abcdefABCDEF01',
    'Deploy of *v2.3* finished. [Notes](https://example.com/v2.3)',
  ),
  open: requestView(request(), bob),
  answered: requestView(request({ version: 2, recipients: [recipient('approve')] }), bob),
  changeable: requestView(request({ version: 2, mode: 'onTimeout', recipients: [recipient('reject')] }), bob),
  expired: requestView(request({ version: 2, ...finished, recipients: [recipient(null, true)] }), bob),
  closed: requestView(request({ version: 3, ...finished, recipients: [recipient('approve')] }), bob),
};

/** Every element type and action type of a card, recursively. */
function typesOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(typesOf);
  if (typeof value !== 'object' || value === null) return [];
  const record = value as Record<string, unknown>;
  const own = typeof record.type === 'string' ? [record.type] : [];
  return [
    ...own,
    ...typesOf(record.body),
    ...typesOf(record.items),
    ...typesOf(record.inlines),
    ...typesOf(record.actions),
  ];
}

describe('adaptiveCard', () => {
  it.each(Object.keys(views))('makes a valid schema-1.5 card of a %s view', (name) => {
    const card = adaptiveCard(views[name]!);
    expect(adaptiveCardProblems(card)).toEqual([]);
    expect(card.version).toBe('1.5');
    expect(new Set(typesOf(card))).toSatisfy((types: Set<string>) =>
      [...types].every((type) =>
        ['AdaptiveCard', 'TextBlock', 'RichTextBlock', 'TextRun', 'Container', 'Action.Execute'].includes(
          type,
        ),
      ),
    );
  });

  it('renders an open interactive message: the text, one Action.Execute per option, the footer', () => {
    expect(adaptiveCard(views.open!)).toEqual({
      type: 'AdaptiveCard',
      $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
      version: '1.5',
      body: [
        { type: 'TextBlock', text: 'Deploy **v2.3** to _production_?', wrap: true },
        {
          type: 'RichTextBlock',
          inlines: [
            { type: 'TextRun', text: '• ' },
            { type: 'TextRun', text: 'api', fontType: 'Monospace' },
          ],
        },
        {
          type: 'RichTextBlock',
          inlines: [
            { type: 'TextRun', text: '• ' },
            { type: 'TextRun', text: 'web', fontType: 'Monospace' },
          ],
          spacing: 'None',
        },
        {
          type: 'TextBlock',
          text: 'See [the runbook](https://wiki.example.com/deploy?env=prod&v=2.3).',
          wrap: true,
        },
        {
          type: 'TextBlock',
          text: 'Please answer within 1 hour (until 2026-03-01 10:00 UTC) · Sent by Alice Doe',
          wrap: true,
          spacing: 'Medium',
          size: 'Small',
          isSubtle: true,
          separator: true,
        },
      ],
      actions: [
        {
          type: 'Action.Execute',
          title: 'Approve ✅',
          verb: 'chat-notify.answer',
          data: { requestId: 'req_0123456789abcdefABCDEF01', value: 'approve' },
        },
        {
          type: 'Action.Execute',
          title: 'Reject',
          verb: 'chat-notify.answer',
          data: { requestId: 'req_0123456789abcdefABCDEF01', value: 'reject' },
        },
      ],
    });
  });

  it('drops the buttons once the choice is final, and says it in the footer', () => {
    const card = adaptiveCard(views.answered!);
    expect(card.actions).toBeUndefined();
    expect(card.body.at(-1)).toMatchObject({
      text: 'You answered “Approve ✅” · Sent by Alice Doe',
      isSubtle: true,
    });
  });

  it('keeps the buttons while the answer may change, the current one styled positive', () => {
    const card = adaptiveCard(views.changeable!);
    expect(card.actions?.map((action) => [action.title, action.style])).toEqual([
      ['Approve ✅', undefined],
      ['Reject', 'positive'],
    ]);
  });

  it('says the request expired, without buttons', () => {
    const card = adaptiveCard(views.expired!);
    expect(card.actions).toBeUndefined();
    expect(JSON.stringify(card.body.at(-1))).toMatch(/expired at 2026-03-01 10:00 UTC without your answer/);
  });

  it('has no footer and no buttons for a plain message', () => {
    const card = adaptiveCard(views.plain!);
    expect(card.actions).toBeUndefined();
    expect(card.body).toEqual([
      {
        type: 'TextBlock',
        text: 'Deploy of **v2.3** finished. [Notes](https://example.com/v2.3)',
        wrap: true,
      },
    ]);
  });

  it('escapes an option text or sender name that holds markup in the footer, never in a button title', () => {
    const view = requestView(
      request({
        version: 2,
        sender: { userId: 'usr_x', name: '*Mallory* [x](https://evil.test)' },
        options: [
          { text: '**Yes**', value: 'yes' },
          { text: 'No', value: 'no' },
        ],
        recipients: [recipient('yes')],
      }),
      bob,
    );
    const footer = adaptiveCard(view).body.at(-1);
    expect(footer).toMatchObject({
      text: 'You answered “\\*\\*Yes\\*\\*” · Sent by \\*Mallory\\* \\[x\\](https://evil.test)',
    });
    expect(adaptiveCard(requestView(request({ options: view.buttons }), bob)).actions?.[0]?.title).toBe(
      '**Yes**',
    );
  });

  it('shows what was written when the message renders to nothing', () => {
    const view = plainView('notif_0123456789abcdefABCDEF01', '[ ](javascript:alert(1))');
    expect(adaptiveCard(view).body).toEqual([
      { type: 'TextBlock', text: '\\[ \\](javascript:alert(1))', wrap: true },
    ]);
  });

  it('falls back to one block of plain text when a block per line would be too large for Teams', () => {
    const view = plainView(
      'notif_0123456789abcdefABCDEF01',
      Array.from({ length: 1300 }, () => '*a*').join('\n'),
    );
    const card = adaptiveCard(view);
    expect(Buffer.byteLength(JSON.stringify(card))).toBeLessThanOrEqual(maxCardBytes);
    expect(card.body).toHaveLength(1);
    expect(card.body[0]).toMatchObject({
      type: 'TextBlock',
      text: Array.from({ length: 1300 }, () => 'a').join('\n\n'),
    });
    expect(adaptiveCardProblems(card)).toEqual([]);
  });
});

describe('the size of a card', () => {
  /** Teams refuses messages above about 28 KB; the activity around the card takes under a kilobyte. */
  const cardMessageLimit = 27_000;
  const longest = 4_000;
  const worstCases: [string, string][] = [
    ['tabs that indent one line', `${'\t'.repeat(longest - 1)}x`],
    ['tabs that indent many lines', '\t\t\tx\n'.repeat(longest / 5)],
    ['control characters', '\u0001'.repeat(longest)],
    ['backslashes', '\\'.repeat(longest)],
    ['markdown marks', '*_~`<>[]&#'.repeat(longest / 10)],
    ['short lines', 'a\n'.repeat(longest / 2)],
    ['emoji', '😀'.repeat(longest)],
  ];

  it.each(worstCases)(
    'stays under what Teams takes for a message of %s, buttons and footer included',
    (_, text) => {
      const options = Array.from({ length: 5 }, (_, index) => ({
        text: `${index}${'\u0001'.repeat(74)}`,
        value: `${index}${'v'.repeat(99)}`,
      }));
      const view = requestView(request({ message: text, options }), bob);
      const card = adaptiveCard(view);
      expect(Buffer.byteLength(JSON.stringify(cardMessage(view, card)))).toBeLessThanOrEqual(
        cardMessageLimit,
      );
      expect(adaptiveCardProblems(card)).toEqual([]);
    },
  );
});

describe('cardMessage', () => {
  it('carries the card as an Adaptive Card attachment, with a plain preview', () => {
    const card = adaptiveCard(views.open!);
    expect(cardMessage(views.open!, card)).toEqual({
      type: 'message',
      summary:
        'Deploy v2.3 to production? - api - web See the runbook (https://wiki.example.com/deploy?env=prod&v=2.3).',
      attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', content: card }],
    });
  });

  it('cuts a long preview at 200 code points', () => {
    const view = plainView('notif_0123456789abcdefABCDEF01', '😀'.repeat(300));
    expect([...cardMessage(view, adaptiveCard(view)).summary]).toHaveLength(200);
  });

  it('cuts a preview taken from the message as written (its document shows no plain text) at 200 code points, never inside a character', () => {
    const message = `\`\`\`\n${'a'.repeat(195)}😀😀\n\`\`\``;
    const view = plainView('notif_0123456789abcdefABCDEF01', message);
    const { summary } = cardMessage({ ...view, document: { blocks: [] } }, adaptiveCard(view));
    expect([...summary]).toHaveLength(200);
    expect(summary).not.toMatch(/[\uD800-\uDFFF](?![\uDC00-\uDFFF])/u);
  });
});

describe('invoke answers', () => {
  it('replaces the card, or shows an error', () => {
    const card = adaptiveCard(views.answered!);
    expect(cardInvokeResponse(card)).toEqual({
      statusCode: 200,
      type: 'application/vnd.microsoft.card.adaptive',
      value: card,
    });
    expect(errorInvokeResponse(403, 'No')).toEqual({
      statusCode: 403,
      type: 'application/vnd.microsoft.error',
      value: { code: 'Forbidden', message: 'No' },
    });
  });
});

describe('docs/teams.md', () => {
  it('shows the activity the code sends for its example interactive message', () => {
    const docs = readFileSync(new URL('../../docs/teams.md', import.meta.url), 'utf8');
    const json = /<!-- adaptive-card-example -->\s*```json\n([\s\S]*?)\n```/.exec(docs)?.[1];
    expect(json).toBeDefined();
    const view = requestView(
      request({
        id: 'req_7hQk2mWq9ZtR4xVb1NcY8sLp',
        message:
          'Deploy *v2.3* to _production_?\n- `api`\n- `web`\nSee [the runbook](https://wiki.example.com/deploy).',
        options: [
          { text: 'Approve', value: 'approve' },
          { text: 'Reject', value: 'reject' },
        ],
        timeoutMinutes: 30,
        expiresAt: createdAt + 30 * 60_000,
      }),
      bob,
    );
    expect(JSON.parse(json ?? 'null')).toEqual(cardMessage(view, adaptiveCard(view)));
  });
});

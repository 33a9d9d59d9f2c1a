import { formatText } from 'adaptivecards/lib/text-formatters.js';
import { describe, expect, it } from 'vitest';
import {
  escapeCardText,
  renderAdaptiveCardBody,
  renderAdaptiveCardPlainBody,
} from '../../adapters/chat/teams/card-markdown.js';
import type { MarkdownDocument } from '../../core/markdown/ast.js';
import { parseMarkdown } from '../../core/markdown/parse.js';
import { adaptiveCardProblems } from '../support/fake-bot-connector.js';

const nbsp = '\u00a0';

/**
 * The text of every line of the body, one each: code block lines marked `code:`, the runs of a line
 * holding inline code marked `runs:`, a monospace run between `{` and `}`, bold between `**`,
 * italic between `_`, a link as `[text](url)`.
 */
function lines(source: string): string[] {
  return renderAdaptiveCardBody(parseMarkdown(source)).flatMap((element) => {
    if (element.type === 'Container') return element.items.map((item) => `code:${item.text}`);
    if (element.type === 'TextBlock') return [element.text];
    const runs = element.inlines.map((run) => {
      const code = run.fontType ? `{${run.text}}` : run.text;
      const italic = run.italic ? `_${code}_` : code;
      const bold = run.weight ? `**${italic}**` : italic;
      return run.selectAction ? `[${bold}](${run.selectAction.url})` : bold;
    });
    return [`runs:${runs.join('')}`];
  });
}

describe('renderAdaptiveCardBody', () => {
  it.each([
    ['plain text', 'Deploy finished', ['Deploy finished']],
    ['bold', 'a *b* c', ['a **b** c']],
    ['italic', 'a _b_ c', ['a _b_ c']],
    ['bold and italic nested', '*_both_* and _*both*_', ['**_both_** and _**both**_']],
    [
      'bold and italic whose text starts or ends with punctuation, between letters',
      '请注意*「重要」*的 x*(y)*z _"q"_',
      ['请注意**\u200b「重要」\u200b**的 x**\u200b(y)\u200b**z _\u200b"q"\u200b_'],
    ],
    ['bold whose text ends with an escaped mark, between letters', 'x*a_*y', ['x**a\\_\u200b**y']],
    ['inline code, a monospace run', 'run `npm test` now', ['runs:run {npm test} now']],
    ['inline code keeps markup literal, unescaped', '`*not bold* [a](b)`', ['runs:{*not bold* [a](b)}']],
    ['inline code holding a backtick', '``a`b``', ['runs:{a`b}']],
    [
      'a line holding code keeps its bold, italic and links as runs',
      '*Run* _`make`_ then [docs](https://x.test/a) and [bad](javascript:x)',
      ['runs:**Run** _{make}_ then [docs](https://x.test/a) and bad'],
    ],
    [
      'a refused link in code stays text, markdown unread',
      'Open `[s](ms-excel:x)` now',
      ['runs:Open {[s](ms-excel:x)} now'],
    ],
    ['control characters in code', 'code `a\u0007b`', ['runs:code {a\ufffdb}']],
    ['a list item holding code', '- `api`\n- web', ['runs:• {api}', '• web']],
    ['bullet list, one block per item', '- one\n- *two*', ['• one', '• **two**']],
    ['a line per line break', 'line 1\nline 2', ['line 1', 'line 2']],
    [
      'code block: monospace lines',
      '```\nconst a = 1;\n  indented\n```',
      ['code:const a = 1;', `code:${nbsp}${nbsp}indented`],
    ],
    [
      'code block keeps runs of spaces and empty lines',
      '```\na    b\n\nc\n```',
      [`code:a ${nbsp}${nbsp}${nbsp}b`, `code:${nbsp}`, 'code:c'],
    ],
    ['code block escapes markup', '```\n**x** <y>\n# z\n```', ['code:\\*\\*x\\*\\* \\<y>', 'code:\\# z']],
    ['link', '[docs](https://example.com/a)', ['[docs](https://example.com/a)']],
    [
      'link with parentheses in its URL',
      '[w](https://en.wikipedia.org/wiki/A_(b))',
      ['[w](https://en.wikipedia.org/wiki/A_%28b%29)'],
    ],
    [
      'link without text shows its URL',
      '[](https://example.com)',
      ['[https://example.com/](https://example.com/)'],
    ],
    ['mailto link', '[mail](mailto:ops@example.com)', ['[mail](mailto:ops@example.com)']],
    ['link text is plain and escaped', '[*bold* x_y](https://x.test)', ['[bold x\\_y](https://x.test/)']],
    ['link inside bold', '*see [docs](https://x.test)*', ['**see [docs](https://x.test/)\u200b**']],
    // `![text](url)` would be an image: the `!` is escaped.
    ['link right after a !', 'Done![report](https://x.test/r)', ['Done\\![report](https://x.test/r)']],
    ['a ! in code before a link stays', '`a!`[b](https://x.test)', ['runs:{a!}[b](https://x.test/)']],
    ['javascript: link as plain text', '[click](javascript:alert(1))', ['click']],
    [
      'a refused link without text shows its URL as text',
      'Call [](tel:+15551234567) now',
      ['Call tel:+15551234567 now'],
    ],
    ['the same in a line holding code', '`x` [](tel:+1555)', ['runs:{x} tel:+1555']],
    ['relative link as plain text', '[here](/relative)', ['here']],
    [
      'markdown characters in text are escaped',
      'a ** b __ c ~~d~~ \\ `x',
      ['a \\*\\* b \\_\\_ c \\~\\~d\\~\\~ \\\\ \\`x'],
    ],
    [
      'a backslash before a link stays a backslash',
      '\\[bank](https://evil.test)',
      ['\\\\[bank](https://evil.test/)'],
    ],
    [
      '< cannot start an autolink or HTML',
      '<https://evil.test> <b>x</b>',
      ['\\<https://evil.test> \\<b>x\\</b>'],
    ],
    ['an entity is shown, not decoded', 'AT&amp;T & co', ['AT\\&amp;T & co']],
    ['a leading # is not a heading', '# not a heading', ['\\# not a heading']],
    ['a leading > is not a quote', '> not a quote', ['\\> not a quote']],
    ['a leading + or - is not a list', '+ one\n-5 degrees', ['\\+ one', '\\-5 degrees']],
    ['a leading number is not an ordered list', '1. first\n2) second', ['1\\. first', '2\\) second']],
    ['leading spaces are kept, not a code block', '    four spaces', [`${nbsp.repeat(4)}four spaces`]],
    ['snake_case stays readable', 'snake_case_name', ['snake\\_case\\_name']],
    ['unmatched marks stay literal', 'a * b and `open', ['a \\* b and \\`open']],
  ])('%s', (_name, source, expected) => {
    expect(lines(source)).toEqual(expected);
  });

  it('separates blocks with the default spacing and keeps the lines of a block tight', () => {
    expect(renderAdaptiveCardBody(parseMarkdown('one\ntwo\n\nthree\n- four\n```\nfive\n```'))).toEqual([
      { type: 'TextBlock', text: 'one', wrap: true },
      { type: 'TextBlock', text: 'two', wrap: true, spacing: 'None' },
      { type: 'TextBlock', text: 'three', wrap: true },
      { type: 'TextBlock', text: '• four', wrap: true },
      {
        type: 'Container',
        style: 'emphasis',
        items: [{ type: 'TextBlock', text: 'five', wrap: true, spacing: 'None', fontType: 'Monospace' }],
      },
    ]);
  });

  it('splits spans that hold a line break, and keeps their whitespace outside the marks', () => {
    const document: MarkdownDocument = {
      blocks: [
        {
          type: 'paragraph',
          children: [
            {
              type: 'bold',
              children: [{ type: 'text', value: 'a ' }, { type: 'break' }, { type: 'text', value: 'b' }],
            },
            { type: 'italic', children: [{ type: 'text', value: ' c ' }] },
            { type: 'bold', children: [{ type: 'text', value: ' ' }] },
          ],
        },
      ],
    };
    expect(
      renderAdaptiveCardBody(document).map((element) => element.type === 'TextBlock' && element.text),
    ).toEqual(['**a** ', '**b** _c_  ']);
  });

  it('leaves out lines that render to nothing', () => {
    expect(renderAdaptiveCardBody(parseMarkdown('[ ](javascript:x)'))).toEqual([]);
  });

  it('renders bodies that the official parser reads as valid schema-1.5 cards', () => {
    const source =
      '*Deploy* v2.3 to _production_?\n- `api`\n- `web`\n```\nmake   deploy\n```\nSee [runbook](https://x.test/a?b=1&c=2) <now>\n*Run* _`make`_ per [docs](https://x.test/d)';
    const card = {
      type: 'AdaptiveCard',
      $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
      version: '1.5',
      body: renderAdaptiveCardBody(parseMarkdown(source)),
    };
    expect(adaptiveCardProblems(card)).toEqual([]);
  });
});

describe('renderAdaptiveCardPlainBody', () => {
  it('is one TextBlock of escaped plain text, lines apart by a blank line', () => {
    expect(renderAdaptiveCardPlainBody(parseMarkdown('*a* [b](https://x.test)\n- c\n\n# d'))).toEqual([
      { type: 'TextBlock', text: 'a b (https://x.test)\n\n\\- c\n\n\\# d', wrap: true },
    ]);
  });
});

describe('date functions of Adaptive Card hosts', () => {
  it('leaves none in the text for a host to replace, in text, code spans, code blocks or footers', () => {
    const written = '{{DATE(2026-03-01T09:00:00Z, SHORT)}} at {{TIME(2026-03-01T09:00:00Z)}}';
    const texts = [
      ...lines(`Renew before ${written}`),
      ...lines(`\`${written}\``),
      ...lines(`\`\`\`\n${written}\n\`\`\``),
      escapeCardText(written, true),
    ];
    for (const text of texts) {
      // The official renderer's pass over a TextBlock's text, before it reads the markdown.
      expect(formatText('en', text.replace(/^runs:\{?|\}$/g, ''))).toBe(text.replace(/^runs:\{?|\}$/g, ''));
      expect(text.replaceAll('\u2060', '')).toContain(written);
    }
  });
});

describe('escapeCardText', () => {
  it('escapes only what a host would read as markup, and line starts when asked', () => {
    expect(escapeCardText('1. *x* & y')).toBe('1. \\*x\\* & y');
    expect(escapeCardText('1. *x* & y', true)).toBe('1\\. \\*x\\* & y');
    expect(escapeCardText('\tx', true)).toBe(`${nbsp.repeat(4)}x`);
  });

  it('escapes the start of a line after a lone carriage return, where Teams breaks the line too', () => {
    expect(escapeCardText('Status:\r# Big\r> quoted\r- item\r1. one\r---')).toBe(
      'Status:\r\\# Big\r\\> quoted\r\\- item\r1\\. one\r\\---',
    );
    expect(lines('Status:\r# Big heading\r- item')).toEqual(['Status:\r\\# Big heading\r\\- item']);
  });

  it('escapes the start of a line after a line feed, or both, as text given whole (an option shown in a footer) may hold', () => {
    expect(escapeCardText('Approve\n# Approved by the CFO\r\n- [x] audited\n  > quoted', true)).toBe(
      `Approve\n\\# Approved by the CFO\r\n\\- \\[x\\] audited\n${nbsp.repeat(2)}\\> quoted`,
    );
  });
});

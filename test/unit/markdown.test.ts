import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Inline, MarkdownDocument } from '../../core/markdown/ast.js';
import { parseMarkdown } from '../../core/markdown/parse.js';
import { renderHtml } from '../../core/markdown/render-html.js';
import { renderPlainText } from '../../core/markdown/render-plain.js';
import { safeLinkUrl } from '../../core/markdown/safe-url.js';

const text = (value: string): Inline => ({ type: 'text', value });
const bold = (...children: Inline[]): Inline => ({ type: 'bold', children });
const italic = (...children: Inline[]): Inline => ({ type: 'italic', children });
const code = (value: string): Inline => ({ type: 'code', value });
const link = (url: string, ...children: Inline[]): Inline => ({ type: 'link', url, children });
const br: Inline = { type: 'break' };

/** The inline content of a message that must parse to a single paragraph. */
const inlines = (source: string): Inline[] => {
  const { blocks } = parseMarkdown(source);
  expect(blocks).toHaveLength(1);
  const [block] = blocks;
  if (block?.type !== 'paragraph') throw new Error(`expected one paragraph, got ${JSON.stringify(blocks)}`);
  return block.children;
};

const html = (source: string): string => renderHtml(parseMarkdown(source));

const LINK_ATTRIBUTES = 'rel="noopener noreferrer nofollow" target="_blank"';
const ALLOWED_TAG = /^<\/?(?:p|br|ul|li|pre|code|strong|em|a)(?=[\s>])/;

describe('parseMarkdown: inline syntax', () => {
  it('parses plain text as one text node', () => {
    expect(inlines('hello world')).toEqual([text('hello world')]);
  });

  it('parses *bold*, _italic_ and `code`', () => {
    expect(inlines('a *b* c _d_ e `f` g')).toEqual([
      text('a '),
      bold(text('b')),
      text(' c '),
      italic(text('d')),
      text(' e '),
      code('f'),
      text(' g'),
    ]);
  });

  it('nests bold and italic both ways', () => {
    expect(inlines('*_both_*')).toEqual([bold(italic(text('both')))]);
    expect(inlines('_*both*_')).toEqual([italic(bold(text('both')))]);
    expect(inlines('*a _b_ c*')).toEqual([bold(text('a '), italic(text('b')), text(' c'))]);
  });

  it('lets bold and italic contain code and links', () => {
    expect(inlines('*see `x` and [docs](https://d.io)*')).toEqual([
      bold(text('see '), code('x'), text(' and '), link('https://d.io', text('docs'))),
    ]);
  });

  it('keeps code spans verbatim', () => {
    expect(inlines('`*not bold* _nor_ [a](b)`')).toEqual([code('*not bold* _nor_ [a](b)')]);
    expect(inlines('`<b>&amp;</b>`')).toEqual([code('<b>&amp;</b>')]);
  });

  it('closes a code span with a backtick run of the same length', () => {
    expect(inlines('``a ` b``')).toEqual([code('a ` b')]);
    expect(inlines('run ```inline``` here')).toEqual([text('run '), code('inline'), text(' here')]);
  });

  it('treats a delimiter as literal unless it opens before non-space and closes after non-space', () => {
    expect(inlines('a * b * c')).toEqual([text('a * b * c')]);
    expect(inlines('a *b * c')).toEqual([text('a *b * c')]);
    expect(inlines('a _ b_')).toEqual([text('a _ b_')]);
    expect(inlines('*a *b*')).toEqual([bold(text('a *b'))]);
  });

  it('does not read underscores inside words as italic (snake_case)', () => {
    expect(inlines('set my_var_name now')).toEqual([text('set my_var_name now')]);
    expect(inlines('snake_case and _italic_')).toEqual([text('snake_case and '), italic(text('italic'))]);
    expect(inlines('_a_b_')).toEqual([italic(text('a_b'))]);
    expect(inlines('call __init__ or x_1_2')).toEqual([text('call __init__ or x_1_2')]);
    expect(inlines('été_été_')).toEqual([text('été_été_')]);
  });

  it('still allows bold inside a word', () => {
    expect(inlines('un*believ*able')).toEqual([text('un'), bold(text('believ')), text('able')]);
  });

  it('keeps unclosed delimiters, backticks and brackets literal', () => {
    for (const source of [
      '*bold',
      'italic_',
      '_open',
      '`code',
      '``a`',
      '[text',
      '[text]',
      '[text](',
      '[a](b',
      '[a] (b)',
    ]) {
      expect(inlines(source), source).toEqual([text(source)]);
    }
    expect(inlines('*a* *b')).toEqual([bold(text('a')), text(' *b')]);
  });

  it('leaves doubled delimiters alone', () => {
    expect(inlines('**')).toEqual([text('**')]);
    expect(inlines('**x**')).toEqual([text('*'), bold(text('x')), text('*')]);
  });

  it('does not let a closer inside a code span or link close the outer delimiter', () => {
    expect(inlines('*a `b*` c*')).toEqual([bold(text('a '), code('b*'), text(' c'))]);
    expect(inlines('*a [x*](https://e.com/*) c*')).toEqual([
      bold(text('a '), link('https://e.com/*', text('x*')), text(' c')),
    ]);
  });

  it('merges adjacent text nodes', () => {
    expect(inlines('a * b [c ` d')).toEqual([text('a * b [c ` d')]);
  });

  it('never produces empty text nodes', () => {
    const walk = (nodes: Inline[]): void => {
      for (const node of nodes) {
        if (node.type === 'text') expect(node.value).not.toBe('');
        if ('children' in node) walk(node.children);
      }
    };
    walk(inlines('*a*_b_`c`[d](https://e)'));
  });
});

describe('parseMarkdown: links', () => {
  it('parses the angle-bracket form, URL kept as written and trimmed', () => {
    expect(inlines('[Docs](<https://example.com/a b?q=1>)')).toEqual([
      link('https://example.com/a b?q=1', text('Docs')),
    ]);
    expect(inlines('[x](<  https://e.com  >)')).toEqual([link('https://e.com', text('x'))]);
  });

  it('parses the bare form, which takes no spaces but may be padded', () => {
    expect(inlines('go [here](https://e.com/p?a=1&b=2) now')).toEqual([
      text('go '),
      link('https://e.com/p?a=1&b=2', text('here')),
      text(' now'),
    ]);
    expect(inlines('[x]( https://e.com )')).toEqual([link('https://e.com', text('x'))]);
    expect(inlines('[x](https://e.com/a b)')).toEqual([text('[x](https://e.com/a b)')]);
  });

  it('keeps balanced parentheses inside a bare URL', () => {
    expect(inlines('[Foo](https://en.wikipedia.org/wiki/Foo_(bar)).')).toEqual([
      link('https://en.wikipedia.org/wiki/Foo_(bar)', text('Foo')),
      text('.'),
    ]);
  });

  it('allows bold, italic and code in link text', () => {
    expect(inlines('[*b* _i_ `c`](https://e.com)')).toEqual([
      link('https://e.com', bold(text('b')), text(' '), italic(text('i')), text(' '), code('c')),
    ]);
  });

  it('keeps a URL as written, whatever its scheme', () => {
    expect(inlines('[x](javascript:alert(1))')).toEqual([link('javascript:alert(1)', text('x'))]);
    expect(inlines('[x](relative/path)')).toEqual([link('relative/path', text('x'))]);
  });

  it('does not treat an empty URL as a link', () => {
    expect(inlines('[x]()')).toEqual([text('[x]()')]);
    expect(inlines('[x](<>)')).toEqual([text('[x](<>)')]);
  });

  it('keeps a link whatever follows it: an unclosed delimiter before it and a lone [ after it', () => {
    expect(inlines('*see [docs](https://d.io) [draft')).toEqual([
      text('*see '),
      link('https://d.io', text('docs')),
      text(' [draft'),
    ]);
  });

  it('never nests links: the innermost bracket pair wins', () => {
    expect(inlines('[a [b](https://b.io)')).toEqual([text('[a '), link('https://b.io', text('b'))]);
    expect(inlines('[`]`](https://e.com)')).toEqual([link('https://e.com', code(']'))]);
  });
});

describe('parseMarkdown: blocks', () => {
  it('returns no blocks for empty or blank input', () => {
    expect(parseMarkdown('')).toEqual({ blocks: [] });
    expect(parseMarkdown('  \n\t\n')).toEqual({ blocks: [] });
  });

  it('joins consecutive lines with breaks and splits paragraphs on blank lines', () => {
    expect(parseMarkdown('one\ntwo\n\n\nthree')).toEqual({
      blocks: [
        { type: 'paragraph', children: [text('one'), br, text('two')] },
        { type: 'paragraph', children: [text('three')] },
      ],
    });
  });

  it('accepts CRLF line endings', () => {
    expect(parseMarkdown('one\r\ntwo\r\n\r\n- a\r\n- b\r\n```\r\nx\r\n```')).toEqual({
      blocks: [
        { type: 'paragraph', children: [text('one'), br, text('two')] },
        { type: 'list', items: [[text('a')], [text('b')]] },
        { type: 'codeBlock', value: 'x' },
      ],
    });
  });

  it('groups consecutive "- " lines into one list with inline markup per item', () => {
    expect(parseMarkdown('Todo:\n- *first*\n- [second](https://e.com)\n-not an item\n\n- again')).toEqual({
      blocks: [
        { type: 'paragraph', children: [text('Todo:')] },
        { type: 'list', items: [[bold(text('first'))], [link('https://e.com', text('second'))]] },
        { type: 'paragraph', children: [text('-not an item')] },
        { type: 'list', items: [[text('again')]] },
      ],
    });
  });

  it('does not continue an inline delimiter across lines', () => {
    expect(inlines('*a\nb*')).toEqual([text('*a'), br, text('b*')]);
  });

  it('keeps code block content verbatim, markdown included, and drops the language tag', () => {
    const source = '```ts\n*not bold*\n\n- not a list\n[a](javascript:x)\n  indented\n```\nafter';
    expect(parseMarkdown(source)).toEqual({
      blocks: [
        { type: 'codeBlock', value: '*not bold*\n\n- not a list\n[a](javascript:x)\n  indented' },
        { type: 'paragraph', children: [text('after')] },
      ],
    });
  });

  it('runs an unclosed fence to the end of the message', () => {
    expect(parseMarkdown('before\n```\ncode\n\nmore')).toEqual({
      blocks: [
        { type: 'paragraph', children: [text('before')] },
        { type: 'codeBlock', value: 'code\n\nmore' },
      ],
    });
    expect(parseMarkdown('```')).toEqual({ blocks: [{ type: 'codeBlock', value: '' }] });
  });

  it('reads a fence line that also ends with a fence as a one-line block', () => {
    expect(parseMarkdown('```SELECT * FROM t```\nnext')).toEqual({
      blocks: [
        { type: 'codeBlock', value: 'SELECT * FROM t' },
        { type: 'paragraph', children: [text('next')] },
      ],
    });
  });

  it('reads code and prose on a line that starts with a fence as a code span and prose', () => {
    expect(parseMarkdown('```npm ci``` fails on *main*\n- *api*')).toEqual({
      blocks: [
        {
          type: 'paragraph',
          children: [
            { type: 'code', value: 'npm ci' },
            text(' fails on '),
            { type: 'bold', children: [text('main')] },
          ],
        },
        { type: 'list', items: [[{ type: 'bold', children: [text('api')] }]] },
      ],
    });
  });

  it('reads a fence line that ends with a longer run of backticks as a one-line block, as before', () => {
    expect(parseMarkdown('```a````')).toEqual({ blocks: [{ type: 'codeBlock', value: 'a`' }] });
    expect(parseMarkdown('````\ncode\n````')).toEqual({
      blocks: [{ type: 'codeBlock', value: 'code\n````' }],
    });
  });

  it('keeps the word after an unclosed fence: nothing closed what a language tag would name', () => {
    expect(parseMarkdown('```deploy-failed')).toEqual({
      blocks: [{ type: 'codeBlock', value: 'deploy-failed' }],
    });
    expect(parseMarkdown('```js\nx\n```')).toEqual({ blocks: [{ type: 'codeBlock', value: 'x' }] });
  });

  it('keeps text after the opening fence when it is not a language tag', () => {
    expect(parseMarkdown('```first line\nsecond\n```')).toEqual({
      blocks: [{ type: 'codeBlock', value: 'first line\nsecond' }],
    });
  });

  it('ends a paragraph at a list or a fence', () => {
    expect(parseMarkdown('intro\n- a\n```\nx\n```')).toEqual({
      blocks: [
        { type: 'paragraph', children: [text('intro')] },
        { type: 'list', items: [[text('a')]] },
        { type: 'codeBlock', value: 'x' },
      ],
    });
  });
});

describe('renderHtml', () => {
  it('renders every element with its tag', () => {
    const source = '*b* _i_ `c` [l](https://e.com)\nline 2\n\n- one\n- two\n```\ncode\n```';
    expect(html(source)).toBe(
      `<p><strong>b</strong> <em>i</em> <code>c</code> <a href="https://e.com/" ${LINK_ATTRIBUTES}>l</a>` +
        '<br>line 2</p><ul><li>one</li><li>two</li></ul><pre><code>code</code></pre>',
    );
  });

  it('renders nothing for an empty document', () => {
    expect(renderHtml({ blocks: [] })).toBe('');
  });

  it('escapes & < > " \' in text, code and code blocks', () => {
    expect(html('a & b < c > d " e \' f')).toBe('<p>a &amp; b &lt; c &gt; d &quot; e &#39; f</p>');
    expect(html('`<b>`')).toBe('<p><code>&lt;b&gt;</code></p>');
    expect(html('```\n<script>alert("x")</script>\n```')).toBe(
      '<pre><code>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</code></pre>',
    );
  });

  it('escapes entities instead of passing them through', () => {
    expect(html('&lt;script&gt; &amp; &#60;')).toBe('<p>&amp;lt;script&amp;gt; &amp;amp; &amp;#60;</p>');
  });

  it('neutralizes script tags and attribute injection in text', () => {
    expect(html('<script>alert(1)</script>')).toBe('<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>');
    expect(html('"><img src=x onerror=alert(1)>')).toBe(
      '<p>&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</p>',
    );
    expect(html('*<img onerror=alert(1)>*')).toBe('<p><strong>&lt;img onerror=alert(1)&gt;</strong></p>');
  });

  it('links http, https and mailto URLs, whatever their case', () => {
    expect(html('[a](HTTPS://Example.com/Path)')).toBe(
      `<p><a href="https://example.com/Path" ${LINK_ATTRIBUTES}>a</a></p>`,
    );
    expect(html('[a](http://e.com)')).toContain('href="http://e.com/"');
    expect(html('[mail](mailto:ops@example.com)')).toBe(
      `<p><a href="mailto:ops@example.com" ${LINK_ATTRIBUTES}>mail</a></p>`,
    );
  });

  it.each([
    ['javascript:alert(1)'],
    ['JAVASCRIPT:alert(1)'],
    ['JaVaScRiPt:alert(1)'],
    ['<  javascript:alert(1)>'],
    ['<java\tscript:alert(1)>'],
    ['data:text/html,<script>alert(1)</script>'],
    ['vbscript:msgbox(1)'],
    ['file:///etc/passwd'],
    ['//evil.example/x'],
    ['/relative'],
    ['relative/path'],
    ['https:'],
    ['http://'],
  ])('renders the link text alone for %j', (url) => {
    expect(html(`[click *me*](${url})`)).toBe('<p>click me</p>');
  });

  it('renders an unsafe link that the angle form padded with spaces as text', () => {
    expect(html('[x](< javascript:alert(1)>)')).toBe('<p>x</p>');
  });

  it('escapes quotes and brackets that try to break out of the href', () => {
    const angle = html('[x](<https://e.com/"onmouseover="alert(1)>)');
    expect(angle).not.toContain('"onmouseover');
    expect(angle).toContain('href="https://e.com/%22onmouseover=%22alert(1)"');

    const mailto = html('[x](<mailto:a"onclick="alert(1)@e.com>)');
    expect(mailto).toContain('href="mailto:a&quot;onclick=&quot;alert(1)@e.com"');
    expect(mailto.match(/"/g)).toHaveLength(2 + 4);

    const single = html("[x](https://e.com/'onfocus='alert(1))");
    expect(single).not.toMatch(/'onfocus/);
  });

  it('shows a refused link without text as its URL, escaped', () => {
    expect(html('Call [](tel:+15551234567) now')).toBe('<p>Call tel:+15551234567 now</p>');
    expect(html('[](javascript:x<b>)')).toBe('<p>javascript:x&lt;b&gt;</p>');
  });

  it('escapes the link text of a refused link', () => {
    expect(html('[<img src=x onerror=alert(1)>](javascript:x)')).toBe(
      '<p>&lt;img src=x onerror=alert(1)&gt;</p>',
    );
  });

  it('shows the URL as the text of a safe link with no text', () => {
    const document: MarkdownDocument = {
      blocks: [{ type: 'paragraph', children: [link('https://e.com/<x>')] }],
    };
    expect(renderHtml(document)).toBe(
      `<p><a href="https://e.com/%3Cx%3E" ${LINK_ATTRIBUTES}>https://e.com/&lt;x&gt;</a></p>`,
    );
  });

  it('never nests anchors, even in a hand-built document', () => {
    const document: MarkdownDocument = {
      blocks: [
        {
          type: 'paragraph',
          children: [link('https://outer.io', text('a '), link('https://inner.io', text('b')))],
        },
      ],
    };
    expect(renderHtml(document)).toBe(`<p><a href="https://outer.io/" ${LINK_ATTRIBUTES}>a b</a></p>`);
  });
});

describe('safeLinkUrl', () => {
  it('returns the normalized href of http, https and mailto URLs', () => {
    expect(safeLinkUrl('https://example.com')).toBe('https://example.com/');
    expect(safeLinkUrl('  HTTP://EXAMPLE.com/A?b=1#c  ')).toBe('http://example.com/A?b=1#c');
    expect(safeLinkUrl('MailTo:someone@example.com')).toBe('mailto:someone@example.com');
  });

  it('refuses other schemes, relative and unparsable URLs', () => {
    for (const url of [
      '',
      '   ',
      'javascript:alert(1)',
      ' JavaScript:alert(1)',
      '\u0000javascript:alert(1)',
      'java\nscript:alert(1)',
      'data:text/html;base64,PHNjcmlwdD4=',
      'vbscript:x',
      'ftp://example.com',
      'example.com',
      '/path',
      '//example.com',
      'http://exa mple.com',
    ]) {
      expect(safeLinkUrl(url), JSON.stringify(url)).toBeNull();
    }
  });
});

describe('renderPlainText', () => {
  it('removes formatting and keeps structure', () => {
    const source = '*Deploy* _now_: run `make`\nthen wait\n\n- one\n- *two*\n```\n*raw*\n```';
    expect(renderPlainText(parseMarkdown(source))).toBe(
      'Deploy now: run make\nthen wait\n\n- one\n- two\n\n*raw*',
    );
  });

  it('writes links as text (url), or just the URL when the text adds nothing', () => {
    expect(renderPlainText(parseMarkdown('see [the *docs*](<https://e.com/a b>)'))).toBe(
      'see the docs (https://e.com/a b)',
    );
    expect(renderPlainText(parseMarkdown('[https://e.com](https://e.com)'))).toBe('https://e.com');
    expect(renderPlainText({ blocks: [{ type: 'paragraph', children: [link('https://e.com')] }] })).toBe(
      'https://e.com',
    );
  });

  it('does not escape anything', () => {
    expect(renderPlainText(parseMarkdown('<b> & "q"'))).toBe('<b> & "q"');
  });
});

describe('properties', () => {
  /** Strings made of markdown syntax, hostile fragments and text, to reach deep into the parser. */
  const markdownish = fc
    .array(
      fc.oneof(
        fc.constantFrom(
          '*',
          '_',
          '`',
          '```',
          '[',
          ']',
          '(',
          ')',
          '(<',
          '>)',
          '](',
          '- ',
          '\n',
          '\r\n',
          ' ',
          'a',
          'é',
          '<',
          '>',
          '"',
          "'",
          '&',
          '<script>',
          '<img onerror=x>',
          'javascript:',
          'JAVASCRIPT:',
          ' data:',
          'vbscript:',
          'http://e.io/',
          'https://x.y',
          'mailto:a@b',
          '//evil',
        ),
        fc.string({ maxLength: 4 }),
      ),
      { maxLength: 40 },
    )
    .map((parts) => parts.join(''));

  const anyString = fc.oneof(markdownish, fc.string({ unit: 'binary' }), fc.string());

  /** Every `<` starts an allowed tag, tags nest properly, and anchors carry only a safe href. */
  const assertSafeHtml = (output: string): void => {
    const stack: string[] = [];
    let index = output.indexOf('<');
    while (index >= 0) {
      const rest = output.slice(index);
      expect(rest, output).toMatch(ALLOWED_TAG);
      const tag = rest.slice(0, rest.indexOf('>') + 1);
      if (tag.startsWith('<a ')) {
        expect(tag).toMatch(
          /^<a href="(?:https?:|mailto:)[^"<>]*" rel="noopener noreferrer nofollow" target="_blank">$/,
        );
      } else {
        expect(tag).toMatch(/^<\/?[a-z]+>$/);
      }
      const name = tag.replace(/^<\/?([a-z]+).*$/, '$1');
      if (tag.startsWith('</')) expect(stack.pop(), output).toBe(name);
      else if (name !== 'br') stack.push(name);
      index = output.indexOf('<', index + 1);
    }
    expect(stack).toEqual([]);
    for (const [, href] of output.matchAll(/href="([^"]*)"/g)) {
      expect(href).toMatch(/^(?:https?:|mailto:)/);
    }
  };

  it('parseMarkdown never throws and renderHtml emits only allowed, balanced tags and safe hrefs', () => {
    fc.assert(
      fc.property(anyString, (source) => {
        const document = parseMarkdown(source);
        assertSafeHtml(renderHtml(document));
        expect(typeof renderPlainText(document)).toBe('string');
      }),
      { numRuns: 2000 },
    );
  });

  it('renderHtml keeps any text safe in every position of a hand-built document', () => {
    const node = fc.letrec<{ inline: Inline }>((tie) => ({
      inline: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.string().map(text),
        fc.string().map(code),
        fc.constant(br),
        fc.array(tie('inline'), { maxLength: 3 }).map((children) => bold(...children)),
        fc.array(tie('inline'), { maxLength: 3 }).map((children) => italic(...children)),
        fc
          .tuple(fc.oneof(fc.string(), fc.webUrl(), markdownish), fc.array(tie('inline'), { maxLength: 3 }))
          .map(([url, children]) => link(url, ...children)),
      ),
    })).inline;
    const document = fc.array(
      fc.oneof(
        fc.array(node, { maxLength: 4 }).map((children) => ({ type: 'paragraph' as const, children })),
        fc
          .array(fc.array(node, { maxLength: 3 }), { maxLength: 3 })
          .map((items) => ({ type: 'list' as const, items })),
        fc.string().map((value) => ({ type: 'codeBlock' as const, value })),
      ),
      { maxLength: 4 },
    );
    fc.assert(
      fc.property(document, (blocks) => {
        assertSafeHtml(renderHtml({ blocks }));
      }),
      { numRuns: 500 },
    );
  });
});

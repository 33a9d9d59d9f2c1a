import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseMarkdown } from '../../core/markdown/parse.js';
import { renderMrkdwn } from '../../core/markdown/render-mrkdwn.js';
import { splitMrkdwn } from '../../core/markdown/split-mrkdwn.js';

const mrkdwn = (source: string): string => renderMrkdwn(parseMarkdown(source));
const zwsp = '\u200b';

describe('renderMrkdwn', () => {
  it.each([
    ['plain text', 'Deploy finished', 'Deploy finished'],
    ['bold', 'a *b* c', 'a *b* c'],
    ['italic', 'a _b_ c', 'a _b_ c'],
    ['bold and italic nested', '*_both_* and _*both*_', '*_both_* and _*both*_'],
    ['inline code', 'run `npm test` now', 'run `npm test` now'],
    ['inline code keeps markup literal', '`*not bold* [a](b)`', '`*not bold* [a](b)`'],
    [
      'tildes of the text, which Slack would strike through',
      '~strike~ and ~~two~~',
      '~\u200bstrike~\u200b and ~\u200b~\u200btwo~\u200b~\u200b',
    ],
    ['a tilde in code, kept as it is', '`~x~`', '`~x~`'],
    ['code block', '```\nconst a = 1;\n  indented\n```', '```\nconst a = 1;\n  indented\n```'],
    ['bullet list', '- one\n- *two*', '• one\n• *two*'],
    ['line breaks', 'line 1\nline 2', 'line 1\nline 2'],
    ['blocks apart by a blank line', 'text\n- item\n\n```\ncode\n```', 'text\n\n• item\n\n```\ncode\n```'],
    ['link', '[docs](https://example.com/a)', '<https://example.com/a|docs>'],
    ['link with & in its URL', '[q](https://example.com/?a=1&b=2)', '<https://example.com/?a=1&amp;b=2|q>'],
    ['link with | in URL and text', '[a|b](https://x.test/p|q)', '<https://x.test/p%7Cq|a|b>'],
    ['link with < > in its URL', '[x](https://a.test/<y>)', '<https://a.test/%3Cy%3E|x>'],
    ['link without text', '[](https://example.com)', '<https://example.com/>'],
    ['mailto link', '[mail](mailto:ops@example.com)', '<mailto:ops@example.com|mail>'],
    ['link text is plain', '[*bold* label](https://x.test)', '<https://x.test/|bold label>'],
    ['link inside bold', '*see [docs](https://x.test)*', '*see <https://x.test/|docs>*'],
    ['javascript: link as plain text', '[click](javascript:alert(1))', 'click'],
    [
      'a refused link without text shows its URL as text',
      'Call [](tel:+15551234567) now',
      'Call tel:+15551234567 now',
    ],
    ['data: link as plain text', '[img](data:text/html,<b>x</b>)', 'img'],
    ['relative link as plain text', '[here](/relative)', 'here'],
    // A word that starts with `>` is guarded wherever it stands: any word may start a section.
    ['& < > escaped', 'a < b && c > d', 'a &lt; b &amp;&amp; c \u200b&gt; d'],
    [
      'a bare URL with a tilde, left whole for Slack to link',
      'see https://x.example/~alice/q3.pdf',
      'see https://x.example/~alice/q3.pdf',
    ],
    ['marks beside a word with a tilde keep their gap', 'x~y*3*4', 'x~\u200by\u200b*3*\u200b4'],
    [
      'no mention can be forged',
      '<!channel> <@U123> <https://evil.test|bank>',
      '&lt;!channel&gt; &lt;@U123&gt; &lt;https://evil.test|bank&gt;',
    ],
    [
      'no special mention is made of text, in any case, with punctuation around',
      '@here (@channel) @Everyone. *@group* @here_ @heres @here-and-now alice@here.example (https://x.test/a_@here)',
      `@${zwsp}here (@${zwsp}channel) @${zwsp}Everyone. *@${zwsp}group* @${zwsp}here_ @heres @here-and-now alice@here.example (https://x.test/a_@here)`,
    ],
    ['escapes inside code', '`<b> & </b>`', '`&lt;b&gt; &amp; &lt;/b&gt;`'],
    [
      'escapes inside code blocks',
      '```\nif (a < b && c > d) {}\n```',
      '```\nif (a &lt; b &amp;&amp; c &gt; d) {}\n```',
    ],
    ['bold inside a word gets invisible boundaries', '2*3*4', `2${zwsp}*3*${zwsp}4`],
    ['bold at the start of a word', '*a*b', `*a*${zwsp}b`],
    ['a leading > is not a quote', '> not a quote', `${zwsp}&gt; not a quote`],
    ['a > inside code stays as is', '```\n> q\n```', '```\n&gt; q\n```'],
    ['snake_case stays literal', 'snake_case_name', 'snake_case_name'],
    ['unmatched marks stay literal', 'a * b and `open', `a * b and \`${zwsp}open`],
    [
      'backticks of the text, which Slack would read as code or a code block',
      'Wrap it in ``` like this\nand close with ``` then',
      `Wrap it in \`${zwsp}\`${zwsp}\`${zwsp} like this\nand close with \`${zwsp}\`${zwsp}\`${zwsp} then`,
    ],
    [
      'a code block holding three backticks, which would end it',
      '```\necho "```"\nmore\n```',
      `\`\`\`\necho "\`${zwsp}\`${zwsp}\`"\nmore\n\`\`\``,
    ],
    [
      'a backtick in a code span, which would end it, shown as its look-alike',
      'Run ``git log --format=`%h`x`` now',
      'Run `git log --format=\u02cb%h\u02cbx` now',
    ],
    [
      'a special mention before a URL in one word, or as a link text',
      '@here:https://status.example.com (@channel)https://s.example.com [@here](https://status.example.com)',
      `@${zwsp}here:https://status.example.com (@${zwsp}channel)https://s.example.com <https://status.example.com/|@${zwsp}here>`,
    ],
    [
      'a URL after a bracket or a label in one word, left whole',
      'CV (https://example.edu/~alice/cv) and x~y:https://example.edu/~bob',
      `CV (https://example.edu/~alice/cv) and x~${zwsp}y:https://example.edu/~bob`,
    ],
    [
      'a special mention joined to a URL by a character of schemes',
      '@here+http://x.test [@here+https://x.test](https://y.test)',
      `@${zwsp}here+http://x.test <https://y.test/|@${zwsp}here+https://x.test>`,
    ],
    ['bold between astral letters gets invisible boundaries', '𠮷*野家*𠮷', `𠮷${zwsp}*野家*${zwsp}𠮷`],
  ])('%s', (_name, source, expected) => {
    expect(mrkdwn(source)).toBe(expected);
  });
});

describe('splitMrkdwn', () => {
  it('counts the guards of its words in the limit: no part is longer, whatever it starts with', () => {
    const parts = splitMrkdwn(parseMarkdown(`${'a'.repeat(1000)} >${'b'.repeat(2996)}`), 3000);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(3000);
    expect(parts.join('')).toContain('\u200b&gt;b');
  });

  it('keeps the guard of every tilde in a word cut between parts', () => {
    const parts = splitMrkdwn(parseMarkdown(`~strike~,${'x'.repeat(3000)}`), 3000);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(part).not.toMatch(/~(?!\u200b)/);
  });

  it('never starts a part with a `>` that Slack would show as a quote, where a part begins mid-line', () => {
    const parts = splitMrkdwn(
      parseMarkdown(`${'word '.repeat(599)}ab >not a quote, just a comparison`),
      3000,
    );
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(part).not.toMatch(/^[*_~]*&gt;/);
    expect(parts.at(-1)).toContain('\u200b&gt;not a quote');
  });

  const split = (source: string, max = 3000) => splitMrkdwn(parseMarkdown(source), max);

  it('keeps a message that fits in one part', () => {
    expect(split('Deploy *v2* to production?')).toEqual(['Deploy *v2* to production?']);
  });

  it('splits a 4,000-character message into sections of at most 3,000', () => {
    const source = Array.from({ length: 800 }, (_, i) => `w${i % 10}rd`).join(' ');
    expect(source.length).toBeGreaterThan(3900);
    const parts = split(source);
    expect(parts.length).toBe(2);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(3000);
    expect(parts.join(' ')).toBe(mrkdwn(source));
  });

  it('ends a part between paragraphs rather than inside one', () => {
    const paragraph = 'word '.repeat(150).trim();
    const parts = split([paragraph, paragraph, paragraph].join('\n\n'), 1600);
    expect(parts).toEqual([`${paragraph}\n\n${paragraph}`, paragraph]);
  });

  it('never cuts inside an escape: 4,000 ampersands become whole &amp; entities', () => {
    const parts = split('&'.repeat(4000));
    expect(parts.length).toBe(7);
    for (const part of parts) {
      expect(part).toMatch(/^(&amp;)+$/);
      expect(part.length).toBeLessThanOrEqual(3000);
    }
    expect(parts.join('')).toBe('&amp;'.repeat(4000));
  });

  it('ends a part before inline code rather than inside it, keeping its spaces', () => {
    const parts = split(`${'word '.repeat(598)}\`code  with  spaces\``);
    expect(parts).toEqual([`${'word '.repeat(598).trim()}`, '`code  with  spaces`']);
  });

  it('keeps every space of a code block it cuts', () => {
    const line = 'ab  '.repeat(900).trimEnd();
    const parts = split(`\`\`\`\n${line}\n\`\`\``);
    expect(parts).toHaveLength(2);
    const code = parts.map((part) => part.replace(/^```\n/, '').replace(/\n```$/, '')).join('');
    expect(code).toBe(line);
  });

  it('never ends a part right after the opening mark of inline code', () => {
    const parts = split(`${'w'.repeat(2990)} \` leading space\``);
    for (const part of parts) expect(part).not.toMatch(/``/);
    expect(parts.at(-1)).toBe('` leading space`');
  });

  it('never cuts inside a link', () => {
    const link = `[the docs](https://example.com/${'p'.repeat(60)})`;
    const source = `${'word '.repeat(15)}${link} ${'word '.repeat(15)}`;
    const parts = split(source, 120);
    const rendered = `<https://example.com/${'p'.repeat(60)}|the docs>`;
    expect(parts.filter((part) => part.includes(rendered))).toHaveLength(1);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(120);
      expect(part.split('<').length).toBe(part.split('>').length);
    }
  });

  it('shows a link too long for any part as plain text, cut where needed', () => {
    const url = `https://example.com/${'p'.repeat(300)}`;
    const parts = split(`see [docs](${url}) end`, 120);
    for (const part of parts) expect(part).not.toContain('<');
    expect(parts.join('')).toContain('docs');
    expect(parts.join('').replaceAll(' ', '')).toContain(`docs(${url})end`);
  });

  it('closes bold at the end of a part and opens it again in the next', () => {
    const parts = split(`*${'bold words '.repeat(30).trim()}*`, 100);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(part).toMatch(/^\*[a-z]+( [a-z]+)*\*$/);
  });

  it('closes a code block at the end of a part and opens it again in the next, cutting between lines', () => {
    const parts = split(`\`\`\`\n${'code line x\n'.repeat(30)}\`\`\``, 100);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(part).toMatch(/^```\n(code line x\n)*code line x\n```$/);
  });

  it('cuts a word longer than a part between characters, never inside a surrogate pair', () => {
    const parts = split('😀'.repeat(120), 100);
    expect(parts.join('')).toBe('😀'.repeat(120));
    for (const part of parts) expect(part).toMatch(/^(😀)+$/u);
  });

  it('cuts a word longer than a part between graphemes, so that flags stay whole', () => {
    const flags = '🇺🇸'.repeat(120);
    const parts = split(`a${flags}`, 100);
    expect(parts.join('')).toBe(`a${flags}`);
    for (const part of parts.slice(1)) expect(part).toMatch(/^(🇺🇸)+$/u);
  });

  it('cuts a word longer than a part between graphemes, so that accents and emoji sequences stay whole', () => {
    const accented = 'e\u0301'.repeat(150);
    const parts = split(`x${accented}`, 100);
    expect(parts.join('')).toBe(`x${accented}`);
    for (const part of parts.slice(1)) expect(part).toMatch(/^(e\u0301)+$/u);
    const family = '👩‍👩‍👧'.repeat(40);
    const cut = split(family, 100);
    expect(cut.join('')).toBe(family);
    for (const part of cut) expect(part).toMatch(/^(👩‍👩‍👧)+$/u);
  });

  it('guards the part of a cut word that starts a section: no quote, no mention there', () => {
    for (const rest of ['>quote', '@here']) {
      const parts = split(`${'a'.repeat(2998)}${rest}`, 3000);
      expect(parts.length).toBe(2);
      expect(parts.join('').replaceAll('\u200b', '')).toBe(`${'a'.repeat(2998)}${rest.replace('>', '&gt;')}`);
      for (const part of parts.slice(1)) {
        expect(part).not.toMatch(/^&gt;|^@here/);
        expect(part.length).toBeLessThanOrEqual(3000);
      }
    }
  });

  it('answers nothing for a message that renders to nothing', () => {
    expect(split('[ ](javascript:alert(1))')).toEqual([]);
  });

  it('keeps every part within the limit, escapes and links whole, for any message', () => {
    const piece = fc.constantFrom(
      'word',
      ' ',
      '\n',
      '\n\n',
      '*bold*',
      '_it_',
      '`code`',
      '&',
      '<',
      '>',
      '[docs](https://example.com/path?a=1&b=2)',
      '- item\n',
      '```\nx < y\n```\n',
      'ü',
      '😀',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 400 }), fc.integer({ min: 100, max: 400 }), (pieces, max) => {
        const parts = split(pieces.join(''), max);
        for (const part of parts) {
          expect(part.length).toBeLessThanOrEqual(max);
          expect(part.trim()).not.toBe('');
          // Every & starts a whole entity, and every < opens a whole link in the same part.
          expect(part.replace(/&(amp|lt|gt);/g, '')).not.toContain('&');
          expect(part.replace(/<https:\/\/example\.com\/path\?a=1&amp;b=2\|docs>/g, '')).not.toMatch(/[<>]/);
        }
      }),
      { numRuns: 200 },
    );
  });
});

import {
  type Block,
  type Inline,
  type MarkdownDocument,
  renderPlainText,
  safeLinkUrl,
} from '../../../core/adapter-kit.js';

/** A `TextBlock` of an Adaptive Card (schema 1.5), with the properties this renderer sets. */
export interface AdaptiveTextBlock {
  type: 'TextBlock';
  /** Markdown as Adaptive Card hosts read it: `**bold**`, `_italic_`, `` `code` ``, `[text](url)`. */
  text: string;
  wrap: true;
  /** Space above the block; the host's default when absent. */
  spacing?: 'None' | 'Medium';
  fontType?: 'Monospace';
  size?: 'Small';
  isSubtle?: true;
  separator?: true;
}

/** A `Container` of an Adaptive Card (schema 1.5): here, the shaded box around a code block. */
export interface AdaptiveContainer {
  type: 'Container';
  style: 'emphasis';
  items: AdaptiveTextBlock[];
}

/** An element of a card's body, as this renderer produces them. */
export type AdaptiveElement = AdaptiveTextBlock | AdaptiveContainer;

const NBSP = '\u00a0';
/** Characters that start or end a span, a link or an autolink anywhere in a line. */
const INLINE_SPECIAL = /[\\`*_~[\]<]/g;
/** `&` that would start an entity (`&amp;`, `&#60;`) and be read as the character it names. */
const ENTITY_START = /&(?=#?[a-z0-9]+;)/gi;
/**
 * `{{` with a word joiner (U+2060, zero width) between its braces: Adaptive Card hosts replace
 * `{{DATE(…)}}` and `{{TIME(…)}}` in a text with a date of the reader's locale before they read
 * its markdown, in code too, which no backslash escapes.
 */
const withoutDateFunctions = (text: string): string => text.replaceAll('{{', '{\u2060{');
/** Control characters but tab and the line breaks. */
const CONTROL = /[^\P{Cc}\t\n\r]/gu;

/**
 * Text with each control character (but tab and line breaks) shown as U+FFFD, the mark of a
 * character that cannot be shown: JSON spells most of them in six bytes, and a message of them
 * would take a card past what Teams accepts.
 */
export const withoutControls = (text: string): string => text.replace(CONTROL, '\uFFFD');

/** A line break, kept by `split` between the parts it separates. */
const LINE_BREAK = /(\r\n|\r|\n)/;
/** What makes a line a heading, a quote, a list item or a setext underline. */
const LINE_START_SPECIAL = /^([#>+=-]|\d+(?=[.)]))/;

/**
 * Text as an Adaptive Card `TextBlock` must receive it to show it as it is: every character the
 * host's markdown would read as formatting (`*`, `_`, `~`, backticks, brackets, `<`, `\`, an `&`
 * that starts an entity) is escaped with a backslash, and `{{` is broken by a zero-width word
 * joiner (hosts would replace a `{{DATE(…)}}` in it); a control character (but tab and line
 * breaks) shows as U+FFFD. At the start of a line (`atLineStart`),
 * leading spaces become no-break spaces (four spaces would start a code block) and a `#`, `>`,
 * `-`, `+`, `=` or `1.` that would make a heading, quote or list is escaped as well; so it is after
 * every line break in the text, a lone carriage return included, where Teams starts a line too.
 */
export function escapeCardText(given: string, atLineStart = false): string {
  const text = withoutControls(given);
  // What follows a line break starts a line, and Teams breaks a line at a lone carriage return as
  // at a line feed.
  if (text.includes('\r') || text.includes('\n')) {
    return text
      .split(LINE_BREAK)
      .map((part, index) => (index % 2 === 1 ? part : escapeCardText(part, index === 0 ? atLineStart : true)))
      .join('');
  }
  const escaped = withoutDateFunctions(text.replace(INLINE_SPECIAL, '\\$&').replace(ENTITY_START, '\\&'));
  if (!atLineStart) return escaped;
  const indent = /^[ \t]*/.exec(escaped)?.[0] ?? '';
  const rest = escaped.slice(indent.length);
  const marked = rest.replace(LINE_START_SPECIAL, (marker) =>
    /^\d/.test(marker) ? `${marker}\\` : `\\${marker}`,
  );
  return NBSP.repeat(indent.replaceAll('\t', '    ').length) + marked;
}

/**
 * The document as the body of an Adaptive Card: one `TextBlock` per line, so that line breaks never
 * depend on how a host reads newlines in markdown. Paragraph lines carry their formatting as
 * markdown (`**bold**`, `_italic_`, `` `code` ``, `[text](url)`); list items start with `• `; a code
 * block is a shaded `Container` of monospace lines that keep their indentation. A link whose URL
 * {@link safeLinkUrl} refuses shows its text only. Every character of the text that the host could
 * read as markup is escaped ({@link escapeCardText}). Lines that render to nothing are left out.
 */
export function renderAdaptiveCardBody(document: MarkdownDocument): AdaptiveElement[] {
  const elements: AdaptiveElement[] = [];
  for (const block of document.blocks) {
    const rendered = renderBlock(block);
    if (rendered.length === 0) continue;
    // Lines of one block sit tight together; blocks keep the host's default gap between them.
    const [first, ...rest] = rendered;
    if (first !== undefined) elements.push(withoutSpacing(first));
    elements.push(...rest);
  }
  return elements;
}

/**
 * The document as one `TextBlock` of escaped plain text, lines apart by a blank line: a compact
 * form, for when {@link renderAdaptiveCardBody}'s block per line would make a card too large.
 */
export function renderAdaptiveCardPlainBody(document: MarkdownDocument): AdaptiveTextBlock[] {
  const lines = renderPlainText(document)
    .split('\n')
    .filter((line) => line.trim() !== '');
  if (lines.length === 0) return [];
  // One no-break space per character of indentation, a tab's four spaces in the full form: a message
  // indented by thousands of tabs stays within what Teams takes.
  const text = lines.map((line) =>
    escapeCardText(
      line.replace(/^[ \t]+/, (indent) => ' '.repeat(indent.length)),
      true,
    ),
  );
  return [{ type: 'TextBlock', text: text.join('\n\n'), wrap: true }];
}

/** The first element of a block keeps the default spacing: the one property it may carry is removed. */
function withoutSpacing(element: AdaptiveElement): AdaptiveElement {
  if (element.type === 'Container') return element;
  const { spacing: _spacing, ...rest } = element;
  return rest;
}

const tightLine = (text: string, extra: Partial<AdaptiveTextBlock> = {}): AdaptiveTextBlock => ({
  type: 'TextBlock',
  text,
  wrap: true,
  spacing: 'None',
  ...extra,
});

function renderBlock(block: Block): AdaptiveElement[] {
  switch (block.type) {
    case 'paragraph':
      return splitLines(block.children)
        .map((line) => renderLine(line))
        .filter((text) => text.trim() !== '')
        .map((text) => tightLine(text));
    case 'list':
      return block.items.flatMap((item) =>
        splitLines(item)
          .map((line) => renderLine(line))
          .filter((text) => text.trim() !== '')
          .map((text, index) => tightLine(index === 0 ? `• ${text}` : `${NBSP.repeat(3)}${text}`)),
      );
    case 'codeBlock':
      return [
        {
          type: 'Container',
          style: 'emphasis',
          items: block.value.split('\n').map((line) => tightLine(codeLine(line), { fontType: 'Monospace' })),
        },
      ];
  }
}

/**
 * A line of a code block, literal: escaped, with its indentation and runs of spaces kept by no-break
 * spaces (a host collapses ordinary ones), and a no-break space for an empty line, which a
 * `TextBlock` cannot be.
 */
function codeLine(line: string): string {
  if (line === '') return NBSP;
  return escapeCardText(line, true).replace(/ {2,}/g, (spaces) => ` ${NBSP.repeat(spaces.length - 1)}`);
}

/**
 * The inline content split at its line breaks, each line keeping the spans it lies in: a bold span
 * holding a break becomes a bold part on each of its lines.
 */
function splitLines(inlines: readonly Inline[]): Inline[][] {
  const lines: Inline[][] = [[]];
  for (const inline of inlines) {
    if (inline.type === 'break') {
      lines.push([]);
    } else if ('children' in inline && inline.children.some(holdsBreak)) {
      splitLines(inline.children).forEach((children, index) => {
        if (index > 0) lines.push([]);
        if (children.length > 0) lines[lines.length - 1]?.push({ ...inline, children });
      });
    } else {
      lines[lines.length - 1]?.push(inline);
    }
  }
  return lines;
}

const holdsBreak = (inline: Inline): boolean =>
  inline.type === 'break' || ('children' in inline && inline.children.some(holdsBreak));

/** Renders one line; tracks whether anything visible was written yet, for line-start escapes. */
function renderLine(line: readonly Inline[]): string {
  const state = { started: false };
  return renderInlines(line, state);
}

interface LineState {
  /** Whether a character other than an opening mark has been written on the line. */
  started: boolean;
}

function renderInlines(inlines: readonly Inline[], state: LineState): string {
  let out = '';
  for (const inline of inlines) {
    const rendered = renderInline(inline, state);
    // `![` opens an image: a `!` ending the text right before a link is escaped, so the link stays one.
    out = inline.type === 'link' && out.endsWith('!') ? `${out.slice(0, -1)}\\!${rendered}` : out + rendered;
  }
  return out;
}

function renderInline(inline: Inline, state: LineState): string {
  switch (inline.type) {
    case 'text':
      return text(inline.value, state);
    case 'bold':
      return span('**', renderInlines(inline.children, state));
    case 'italic':
      return span('_', renderInlines(inline.children, state));
    case 'code':
      state.started = true;
      return codeSpan(inline.value);
    case 'link':
      return link(inline.url, inline.children, state);
    case 'break':
      return '';
  }
}

function text(value: string, state: LineState): string {
  if (value === '') return '';
  const escaped = escapeCardText(value, !state.started);
  state.started = true;
  return escaped;
}

/**
 * Markdown reads `**` as bold only where it does not touch whitespace on its inner side, so the
 * span's outer whitespace is moved outside its marks; an empty span is left out (`****` is text).
 */
function span(mark: string, inner: string): string {
  const core = inner.trim();
  if (core === '') return inner;
  const lead = inner.slice(0, inner.length - inner.trimStart().length);
  const trail = inner.slice(inner.trimEnd().length);
  return `${lead}${mark}${core}${mark}${trail}`;
}

/** A code span fenced by more backticks than it contains in a row, padded where a backtick touches the fence. */
function codeSpan(value: string): string {
  if (value === '') return '';
  const longestRun = Math.max(0, ...(value.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longestRun + 1);
  const pad = value.startsWith('`') || value.endsWith('`') || /^ .* $/.test(value) ? ' ' : '';
  return `${fence}${pad}${withoutDateFunctions(value)}${pad}${fence}`;
}

/**
 * `[text](url)` with the link's text as plain text (hosts do not format inside a link), and the
 * characters that would end the URL early percent-encoded.
 */
function link(url: string, children: readonly Inline[], state: LineState): string {
  const label = renderPlainText({ blocks: [{ type: 'paragraph', children: [...children] }] });
  const href = safeLinkUrl(url);
  if (href === null) return text(label, state);
  state.started = true;
  const target = href.replace(/[()\\ ]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
  return `[${escapeCardText(label === '' ? href : label)}](${target})`;
}

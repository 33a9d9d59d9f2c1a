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
  /** Markdown as Teams reads it: `**bold**`, `_italic_`, `[text](url)`. */
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

/** A run of a `RichTextBlock` (schema 1.2): its text is shown as it is, no markdown read in it. */
export interface AdaptiveTextRun {
  type: 'TextRun';
  text: string;
  weight?: 'Bolder';
  italic?: true;
  /** Inline code. */
  fontType?: 'Monospace';
  /** A link: the run opens its URL, and is underlined so that it looks like one. */
  selectAction?: { type: 'Action.OpenUrl'; url: string };
  underline?: true;
}

/**
 * A `RichTextBlock` (schema 1.2): a line that holds inline code. Teams reads no code spans in a
 * `TextBlock`'s markdown (its backticks would show, and markdown inside them would be read), so such
 * a line is made of runs, the code in a monospace one.
 */
export interface AdaptiveRichTextBlock {
  type: 'RichTextBlock';
  inlines: AdaptiveTextRun[];
  spacing?: 'None';
}

/** An element of a card's body, as this renderer produces them. */
export type AdaptiveElement = AdaptiveTextBlock | AdaptiveRichTextBlock | AdaptiveContainer;

const NBSP = '\u00a0';
const ZERO_WIDTH_SPACE = '\u200b';
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
 * The document as the body of an Adaptive Card: one element per line, so that line breaks never
 * depend on how a host reads newlines in markdown. A paragraph line is a `TextBlock` carrying its
 * formatting as markdown (`**bold**`, `_italic_`, `[text](url)`), every character of its text that
 * the host could read as markup escaped ({@link escapeCardText}); a line that holds inline code,
 * which Teams' markdown does not have, is a `RichTextBlock` of runs, the code monospace. List items
 * start with `• `; a code block is a shaded `Container` of monospace lines that keep their
 * indentation. A link whose URL {@link safeLinkUrl} refuses shows its text only (its URL without text). Lines that render
 * to nothing are left out.
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
      return renderedLines(block.children).map((line) => lineElement(line, ''));
    case 'list':
      return block.items.flatMap((item) =>
        renderedLines(item).map((line, index) => lineElement(line, index === 0 ? '• ' : NBSP.repeat(3))),
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

/** A line rendered: markdown for a `TextBlock`, or the runs of a `RichTextBlock` when it holds code. */
type RenderedLine = { markdown: string } | { runs: AdaptiveTextRun[] };

const holdsCode = (inline: Inline): boolean =>
  inline.type === 'code' || ('children' in inline && inline.children.some(holdsCode));

/** The lines of some inline content that show something, each rendered. */
function renderedLines(inlines: readonly Inline[]): RenderedLine[] {
  return splitLines(inlines).flatMap((line): RenderedLine[] => {
    if (line.some(holdsCode)) {
      const runs = textRuns(line, {});
      return runs.some((run) => run.text.trim() !== '') ? [{ runs }] : [];
    }
    const markdown = renderLine(line);
    return markdown.trim() === '' ? [] : [{ markdown }];
  });
}

/** A rendered line as a tight element, after `prefix` (a bullet, or the indentation of a list item's later lines). */
function lineElement(line: RenderedLine, prefix: string): AdaptiveElement {
  if ('markdown' in line) return tightLine(prefix + line.markdown);
  const runs: AdaptiveTextRun[] =
    prefix === '' ? line.runs : [{ type: 'TextRun', text: prefix }, ...line.runs];
  return { type: 'RichTextBlock', inlines: runs, spacing: 'None' };
}

/** How the runs of a span look: the marks around it. */
type RunStyle = Omit<AdaptiveTextRun, 'type' | 'text'>;

/** Text as a run shows it: a control character as U+FFFD, `{{` broken as in every text of a card. */
const runText = (text: string): string => withoutDateFunctions(withoutControls(text));

/** The inline content of a line as runs, each styled by the spans it lies in; empty runs left out. */
function textRuns(inlines: readonly Inline[], style: RunStyle): AdaptiveTextRun[] {
  return inlines.flatMap((inline) => inlineRuns(inline, style));
}

function inlineRuns(inline: Inline, style: RunStyle): AdaptiveTextRun[] {
  const run = (text: string, own: RunStyle = style): AdaptiveTextRun[] =>
    text === '' ? [] : [{ type: 'TextRun', text: runText(text), ...own }];
  switch (inline.type) {
    case 'text':
      return run(inline.value);
    case 'code':
      return run(inline.value, { ...style, fontType: 'Monospace' });
    case 'bold':
      return textRuns(inline.children, { ...style, weight: 'Bolder' });
    case 'italic':
      return textRuns(inline.children, { ...style, italic: true });
    case 'link': {
      const label = renderPlainText({ blocks: [{ type: 'paragraph', children: [...inline.children] }] });
      const href = safeLinkUrl(inline.url);
      if (href === null) return run(label || inline.url);
      return run(label === '' ? href : label, {
        ...style,
        selectAction: { type: 'Action.OpenUrl', url: href },
        underline: true,
      });
    }
    case 'break':
      return [];
  }
}

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
      // A line holding code is made of runs instead; here, code is text like any other.
      return text(inline.value, state);
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
 * Punctuation and symbols as CommonMark counts them for emphasis, a backslash escape's included
 * (an escaped `*` or `_` too); not the marks of a span nested inside, which need the punctuation
 * they are next to (such a span, its text starting or ending with punctuation, between letters,
 * stays literal).
 */
const PUNCTUATION_START = /^(?![*_])[\p{P}\p{S}]/u;
const PUNCTUATION_END = /(?:\\[*_]|(?![*_])[\p{P}\p{S}])$/u;

/**
 * Markdown reads `**` as bold only where it does not touch whitespace on its inner side, so the
 * span's outer whitespace is moved outside its marks; an empty span is left out (`****` is text).
 * Nor does it where punctuation is on its inner side and a letter on its outer one (`x**(y)**z`,
 * `注意**「重要」**の`): a zero-width space, neither whitespace nor punctuation, goes between the mark
 * and such punctuation, without a visible change.
 */
function span(mark: string, inner: string): string {
  const core = inner.trim();
  if (core === '') return inner;
  const lead = inner.slice(0, inner.length - inner.trimStart().length);
  const trail = inner.slice(inner.trimEnd().length);
  const open = PUNCTUATION_START.test(core) ? `${mark}${ZERO_WIDTH_SPACE}` : mark;
  const close = PUNCTUATION_END.test(core) ? `${ZERO_WIDTH_SPACE}${mark}` : mark;
  return `${lead}${open}${core}${close}${trail}`;
}

/**
 * `[text](url)` with the link's text as plain text (hosts do not format inside a link), and the
 * characters that would end the URL early percent-encoded.
 */
function link(url: string, children: readonly Inline[], state: LineState): string {
  const label = renderPlainText({ blocks: [{ type: 'paragraph', children: [...children] }] });
  const href = safeLinkUrl(url);
  if (href === null) return text(label || url, state);
  state.started = true;
  const target = href.replace(/[()\\ ]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
  return `[${escapeCardText(label === '' ? href : label)}](${target})`;
}

import type { Block, Inline, MarkdownDocument } from './ast.js';

const FENCE = '```';
const LIST_MARKER = '- ';

/** Deeper bold/italic/link nesting is kept as literal text, so recursion stays bounded on hostile input. */
const MAX_NESTING = 16;

/**
 * A bare link destination is scanned at most this far: balanced parentheses make each scan
 * unbounded otherwise, and a message full of `[a](((` would then cost quadratic time.
 */
const MAX_BARE_URL_LENGTH = 2048;

/** An optional language tag after an opening fence: one word, nothing else on the line. */
const LANGUAGE_TAG = /^\s*\S*\s*$/;

const SPACE = /\s/u;
/** `_` next to one of these is part of a word (snake_case), never an italic delimiter. */
const WORD_BEFORE = /[\p{L}\p{N}_]$/u;
const WORD_AFTER = /^[\p{L}\p{N}_]/u;

/**
 * Parses the message markdown of spec 2.6 into a {@link MarkdownDocument}.
 *
 * Total: every string yields a document and nothing throws. Markup that does not match (a lone `*`,
 * an unclosed backtick, a `[` without `](url)`) stays literal text. Link URLs are kept as written;
 * whether one is safe to follow is each renderer's decision.
 */
export function parseMarkdown(source: string): MarkdownDocument {
  const lines = source.split(/\r?\n/);
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  const endParagraph = (): void => {
    if (paragraph.length > 0) blocks.push(paragraphBlock(paragraph));
    paragraph = [];
  };

  let index = 0;
  while (index < lines.length) {
    const line = lines[index] ?? '';
    if (line.startsWith(FENCE)) {
      endParagraph();
      const { block, next } = readCodeBlock(lines, index);
      blocks.push(block);
      index = next;
    } else if (line.startsWith(LIST_MARKER)) {
      endParagraph();
      const items: Inline[][] = [];
      while (lines[index]?.startsWith(LIST_MARKER)) {
        items.push(parseInline((lines[index] ?? '').slice(LIST_MARKER.length)));
        index += 1;
      }
      blocks.push({ type: 'list', items });
    } else {
      if (line.trim() === '') endParagraph();
      else paragraph.push(line);
      index += 1;
    }
  }
  endParagraph();
  return { blocks };
}

function paragraphBlock(lines: string[]): Block {
  const children: Inline[] = [];
  lines.forEach((line, position) => {
    if (position > 0) children.push({ type: 'break' });
    children.push(...parseInline(line));
  });
  return { type: 'paragraph', children };
}

/**
 * Reads a fenced block starting at `start`. Besides the spec's form, a fence line that also ends with
 * a fence (```code```) is a one-line block, and text after the opening fence that cannot be a
 * language tag is kept as the first line: chat users write both, and dropping their text would lose it.
 */
function readCodeBlock(lines: string[], start: number): { block: Block; next: number } {
  const rest = (lines[start] ?? '').slice(FENCE.length);
  const trimmedRest = rest.trimEnd();
  if (trimmedRest.endsWith(FENCE)) {
    return { block: { type: 'codeBlock', value: trimmedRest.slice(0, -FENCE.length) }, next: start + 1 };
  }
  const content = LANGUAGE_TAG.test(rest) ? [] : [rest];
  let index = start + 1;
  while (index < lines.length && (lines[index] ?? '').trim() !== FENCE) {
    content.push(lines[index] ?? '');
    index += 1;
  }
  // An unclosed fence runs to the end of the message; a closed one also consumes its closing line.
  return { block: { type: 'codeBlock', value: content.join('\n') }, next: index + 1 };
}

function parseInline(text: string): Inline[] {
  return parseRange(text, 0, text.length, 0, false);
}

/**
 * One inline range being parsed, plus what was already learned about it. A failed search (no closer,
 * no link) fails again from any later position of the same range, so it is remembered instead of
 * repeated; this keeps parsing near-linear on input full of unmatched delimiters.
 */
interface Scope {
  readonly source: string;
  readonly end: number;
  readonly inLink: boolean;
  readonly unclosed: Set<string>;
  /** A `[` before this index cannot start a link. */
  linkFailBefore: number;
  /** The last search for the `>)` closing an angle-bracket URL. */
  angleClose: { from: number; at: number } | null;
}

function parseRange(source: string, start: number, end: number, depth: number, inLink: boolean): Inline[] {
  const scope: Scope = { source, end, inLink, unclosed: new Set(), linkFailBefore: start, angleClose: null };
  const nested = depth < MAX_NESTING;
  const out: Inline[] = [];
  let text = '';
  const push = (node: Inline): void => {
    if (text !== '') out.push({ type: 'text', value: text });
    text = '';
    out.push(node);
  };

  let index = start;
  while (index < end) {
    const char = source[index];
    if (char === '`') {
      const span = matchCodeSpan(source, index, end);
      if (span) {
        push({ type: 'code', value: span.value });
        index = span.end;
      } else {
        const run = runLength(source, index, end, '`');
        text += source.slice(index, index + run);
        index += run;
      }
      continue;
    }
    if (
      (char === '*' || char === '_') &&
      nested &&
      !scope.unclosed.has(char) &&
      canOpen(scope, index, char)
    ) {
      const close = findCloser(scope, index + 1, char);
      if (close >= 0) {
        const children = parseRange(source, index + 1, close, depth + 1, inLink);
        push(char === '*' ? { type: 'bold', children } : { type: 'italic', children });
        index = close + 1;
        continue;
      }
      scope.unclosed.add(char);
    }
    if (char === '[' && nested && !inLink) {
      const link = matchLink(scope, index);
      if (link) {
        push({
          type: 'link',
          url: link.url,
          children: parseRange(source, index + 1, link.textEnd, depth + 1, true),
        });
        index = link.end;
        continue;
      }
    }
    text += char;
    index += 1;
  }
  if (text !== '') out.push({ type: 'text', value: text });
  return out;
}

function canOpen(scope: Scope, index: number, delimiter: string): boolean {
  const next = scope.source[index + 1];
  // A doubled delimiter never opens: `__init__` stays literal instead of half-italic.
  if (index + 1 >= scope.end || next === undefined || next === delimiter || SPACE.test(next)) return false;
  return delimiter !== '_' || !WORD_BEFORE.test(scope.source.slice(Math.max(0, index - 2), index));
}

function canClose(source: string, index: number, delimiter: string): boolean {
  const previous = source[index - 1];
  if (previous === undefined || SPACE.test(previous)) return false;
  return delimiter !== '_' || !WORD_AFTER.test(source.slice(index + 1, index + 3));
}

/** The index of the delimiter closing one opened just before `from`, or -1; code spans and links are opaque. */
function findCloser(scope: Scope, from: number, delimiter: string): number {
  const { source, end } = scope;
  let index = from;
  while (index < end) {
    const char = source[index];
    if (char === '`') {
      index = matchCodeSpan(source, index, end)?.end ?? index + runLength(source, index, end, '`');
      continue;
    }
    if (char === '[' && !scope.inLink) {
      const link = matchLink(scope, index);
      if (link) {
        index = link.end;
        continue;
      }
    }
    if (char === delimiter && index > from && canClose(source, index, delimiter)) return index;
    index += 1;
  }
  return -1;
}

function runLength(source: string, index: number, end: number, char: string): number {
  let length = 0;
  while (index + length < end && source[index + length] === char) length += 1;
  return length;
}

/** A code span opened by a run of backticks and closed by the next run of the same length. */
function matchCodeSpan(source: string, index: number, end: number): { value: string; end: number } | null {
  const run = runLength(source, index, end, '`');
  let cursor = index + run;
  while (cursor < end) {
    const next = source.indexOf('`', cursor);
    if (next < 0 || next >= end) return null;
    const length = runLength(source, next, end, '`');
    if (length === run) return { value: source.slice(index + run, next), end: next + length };
    cursor = next + length;
  }
  return null;
}

/**
 * `[text](<url>)` or `[text](url)` starting at `index`. Link text holds no brackets outside code
 * spans, so `[a [b](u)` links only `b`, and links never nest.
 */
function matchLink(scope: Scope, index: number): { textEnd: number; url: string; end: number } | null {
  const { source, end } = scope;
  if (index < scope.linkFailBefore) return null;
  let cursor = index + 1;
  while (cursor < end) {
    const char = source[cursor];
    if (char === ']') break;
    if (char === '[') {
      scope.linkFailBefore = cursor;
      return null;
    }
    cursor =
      char === '`'
        ? (matchCodeSpan(source, cursor, end)?.end ?? cursor + runLength(source, cursor, end, '`'))
        : cursor + 1;
  }
  if (cursor >= end) {
    scope.linkFailBefore = end;
    return null;
  }
  const destination = matchDestination(scope, cursor + 1);
  if (!destination) {
    scope.linkFailBefore = cursor;
    return null;
  }
  return { textEnd: cursor, ...destination };
}

/** The `(<url>)` or `(url)` at `index`; the URL is trimmed and must not be empty. */
function matchDestination(scope: Scope, index: number): { url: string; end: number } | null {
  const { source, end } = scope;
  if (source[index] !== '(') return null;
  if (source[index + 1] === '<') {
    const close = findAngleClose(scope, index + 2);
    if (close < 0) return null;
    const url = source.slice(index + 2, close).trim();
    return url === '' ? null : { url, end: close + 2 };
  }
  let cursor = index + 1;
  while (cursor < end && SPACE.test(source[cursor] ?? '')) cursor += 1;
  const urlStart = cursor;
  const limit = Math.min(end, urlStart + MAX_BARE_URL_LENGTH);
  let depth = 0;
  while (cursor < limit) {
    const char = source[cursor] ?? '';
    if (SPACE.test(char) || (char === ')' && depth === 0)) break;
    if (char === '(') depth += 1;
    if (char === ')') depth -= 1;
    cursor += 1;
  }
  const url = source.slice(urlStart, cursor);
  while (cursor < end && SPACE.test(source[cursor] ?? '')) cursor += 1;
  if (url === '' || cursor >= end || source[cursor] !== ')') return null;
  return { url, end: cursor + 1 };
}

/** The index of the first `>)` at or after `from` within the scope, or -1; reuses the previous search. */
function findAngleClose(scope: Scope, from: number): number {
  const cached = scope.angleClose;
  if (cached && cached.from <= from && (cached.at < 0 || cached.at >= from)) return cached.at;
  const found = scope.source.indexOf('>)', from);
  const at = found >= 0 && found + 2 <= scope.end ? found : -1;
  scope.angleClose = { from, at };
  return at;
}

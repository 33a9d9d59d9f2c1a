import type { Inline } from './ast.js';
import type { LineIndex } from './line-index.js';

/** Deeper bold/italic/link nesting is kept as literal text, so recursion stays bounded on hostile input. */
const MAX_NESTING = 16;

const SPACE = /\s/u;
/** `_` next to one of these is part of a word (snake_case), never an italic delimiter. */
const WORD_BEFORE = /[\p{L}\p{N}_]$/u;

/**
 * The inline content of one line: bold, italic, code spans and links, the rest as text.
 *
 * Markup that does not match (a lone `*`, an unclosed backtick, a `[` without `](url)`) stays literal
 * text. Time is linear in the line's length: every look ahead is a lookup in a {@link LineIndex},
 * and each character is visited by exactly one range's walk.
 */
export function parseInline(text: string, lineIndex: LineIndex): Inline[] {
  lineIndex.load(text);
  return parseRange(lineIndex, 0, text.length, 0, false);
}

function parseRange(line: LineIndex, start: number, end: number, depth: number, inLink: boolean): Inline[] {
  const { source, counter } = line;
  const nested = depth < MAX_NESTING;
  const out: Inline[] = [];
  // Literal text is always the contiguous stretch since the last node, so it is sliced, not built up.
  let textStart = start;

  let index = start;
  while (index < end) {
    counter.steps += 1;
    const char = source.charAt(index);
    if (char === '`') {
      const run = line.runLength(index);
      const close = line.codeSpanClose(index, end);
      if (close !== null) {
        pushText(out, source, textStart, index);
        out.push({ type: 'code', value: source.slice(index + run, close) });
        index = close + run;
        textStart = index;
      } else {
        index += run;
      }
      continue;
    }
    if ((char === '*' || char === '_') && nested && canOpen(source, index, end, char)) {
      const close = line.closer(char, index + 1, end);
      if (close !== null) {
        const children = parseRange(line, index + 1, close, depth + 1, inLink);
        pushText(out, source, textStart, index);
        out.push(char === '*' ? { type: 'bold', children } : { type: 'italic', children });
        index = close + 1;
        textStart = index;
        continue;
      }
    }
    if (char === '[' && nested && !inLink) {
      const link = line.link(index);
      if (link) {
        const children = parseRange(line, index + 1, link.textEnd, depth + 1, true);
        pushText(out, source, textStart, index);
        out.push({ type: 'link', url: link.url, children });
        index = link.end;
        textStart = index;
        continue;
      }
    }
    index += 1;
  }
  pushText(out, source, textStart, end);
  return out;
}

/** Appends the text from `start` to `end` unless it is empty: the document never holds empty text. */
function pushText(out: Inline[], source: string, start: number, end: number): void {
  if (end > start) out.push({ type: 'text', value: source.slice(start, end) });
}

function canOpen(source: string, index: number, end: number, delimiter: string): boolean {
  const next = source.charAt(index + 1);
  // A doubled delimiter never opens: `__init__` stays literal instead of half-italic.
  if (index + 1 >= end || next === delimiter || SPACE.test(next)) return false;
  return delimiter !== '_' || !WORD_BEFORE.test(source.slice(Math.max(0, index - 2), index));
}

import type { Block, Inline, MarkdownDocument } from './ast.js';
import { LineIndex } from './line-index.js';
import { parseInline } from './parse-inline.js';
import type { StepCounter } from './step-counter.js';

const FENCE = '```';
const LIST_MARKER = '- ';

const ANY_SPACE = /\s/;

/**
 * Messages whose lines are at most this long share one {@link LineIndex}: allocating its tables for
 * every message cost more than parsing a short one. Parsing is synchronous, so no two parses ever
 * use it at once; a longer line gets tables of its own, which are not kept.
 */
const SHARED_CAPACITY = 2048;
let sharedIndex: LineIndex | undefined;

function lineIndexFor(longest: number, counter: StepCounter): LineIndex {
  if (longest > SHARED_CAPACITY) return new LineIndex(longest, counter);
  sharedIndex ??= new LineIndex(SHARED_CAPACITY, counter);
  sharedIndex.counter = counter;
  return sharedIndex;
}

/**
 * Parses the message markdown of docs/http-api.md#message-formatting into a {@link MarkdownDocument}.
 *
 * Total: every string yields a document and nothing throws. Markup that does not match (a lone `*`,
 * an unclosed backtick, a `[` without `](url)`) stays literal text. Link URLs are kept as written;
 * whether one is safe to follow is each renderer's decision. Time is linear in the source's length,
 * whatever it holds.
 */
export function parseMarkdown(source: string): MarkdownDocument {
  return parseDocument(source, { steps: 0 });
}

/** A parse together with its cost in {@link StepCounter} steps. */
export interface MeasuredParse {
  document: MarkdownDocument;
  steps: number;
}

/** {@link parseMarkdown}, also counting its steps: lets tests check that the cost grows linearly. */
export function measureMarkdownParse(source: string): MeasuredParse {
  const counter: StepCounter = { steps: 0 };
  const document = parseDocument(source, counter);
  return { document, steps: counter.steps };
}

function parseDocument(source: string, counter: StepCounter): MarkdownDocument {
  const lines = source.split(/\r?\n/);
  counter.steps += source.length;
  let longest = 0;
  for (const line of lines) longest = Math.max(longest, line.length);
  const lineIndex = lineIndexFor(longest, counter);
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  const endParagraph = (): void => {
    if (paragraph.length > 0) blocks.push(paragraphBlock(paragraph, lineIndex));
    paragraph = [];
  };

  let index = 0;
  while (index < lines.length) {
    const line = lines[index] ?? '';
    counter.steps += 1 + line.length;
    if (opensCodeBlock(line)) {
      endParagraph();
      const { block, next } = readCodeBlock(lines, index, counter);
      blocks.push(block);
      index = next;
    } else if (line.startsWith(LIST_MARKER)) {
      endParagraph();
      const items: Inline[][] = [];
      while (lines[index]?.startsWith(LIST_MARKER)) {
        items.push(parseInline((lines[index] ?? '').slice(LIST_MARKER.length), lineIndex));
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

function paragraphBlock(lines: string[], lineIndex: LineIndex): Block {
  const children: Inline[] = [];
  lines.forEach((line, position) => {
    if (position > 0) children.push({ type: 'break' });
    // One push per node, not a spread: a line of many thousand nodes would overflow the argument limit.
    for (const inline of parseInline(line, lineIndex)) children.push(inline);
  });
  return { type: 'paragraph', children };
}

/**
 * Whether a line opens a fenced block: it starts with a fence, and holds no other fence but one
 * that ends it. A line such as ```` ```npm ci``` fails ```` is a code span and prose, as chat users
 * write them, not a fence whose block would swallow the rest of the message.
 */
function opensCodeBlock(line: string): boolean {
  if (!line.startsWith(FENCE)) return false;
  const rest = line.slice(FENCE.length).trimEnd();
  const inner = INNER_FENCE.exec(rest);
  return inner === null || inner.index + inner[0].length === rest.length;
}

/** A run of three backticks or more, as a whole. */
const INNER_FENCE = /`{3,}/;

/**
 * Reads a fenced block starting at `start`. Besides the spec's form, a fence line that also ends with
 * a fence (```code```) is a one-line block, and text after the opening fence that cannot be a
 * language tag is kept as the first line: chat users write both, and dropping their text would lose it.
 */
function readCodeBlock(lines: string[], start: number, counter: StepCounter): { block: Block; next: number } {
  const rest = (lines[start] ?? '').slice(FENCE.length);
  const trimmedRest = rest.trimEnd();
  if (trimmedRest.endsWith(FENCE)) {
    return { block: { type: 'codeBlock', value: trimmedRest.slice(0, -FENCE.length) }, next: start + 1 };
  }
  const content = isLanguageTag(rest) ? [] : [rest];
  let index = start + 1;
  while (index < lines.length && (lines[index] ?? '').trim() !== FENCE) {
    counter.steps += 1 + (lines[index] ?? '').length;
    content.push(lines[index] ?? '');
    index += 1;
  }
  // An unclosed fence runs to the end of the message, and its word is no language tag then, since
  // nothing closed what it would name (```deploy-failed alone shows its word); a closed one also
  // consumes its closing line.
  if (index >= lines.length && isLanguageTag(rest) && /[^`]/.test(rest.trim())) content.unshift(rest);
  return { block: { type: 'codeBlock', value: content.join('\n') }, next: index + 1 };
}

/**
 * One word, nothing else on the line: the optional language tag after an opening fence. Tested on
 * the trimmed text rather than with one anchored pattern, which backtracks quadratically over a
 * long run of spaces.
 */
function isLanguageTag(rest: string): boolean {
  return !ANY_SPACE.test(rest.trim());
}

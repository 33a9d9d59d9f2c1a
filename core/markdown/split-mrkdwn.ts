import type { MarkdownDocument } from './ast.js';
import {
  guardMentions,
  type MrkdwnMark,
  type MrkdwnPiece,
  mrkdwnPieces,
  pieceText,
  textPieces,
} from './render-mrkdwn.js';

/** A place where a part may end: before `pieces[index]`, with what is open there. */
interface Cut {
  index: number;
  /** 2 between blocks, 1 at a line break, 0 at a space, -1 between two pieces that touch. */
  level: number;
  /** Length of the part's text up to here. */
  length: number;
  open: readonly MrkdwnMark[];
}

/**
 * The document as mrkdwn ({@link renderMrkdwn}) in parts of at most `maxLength` UTF-16 code units,
 * for platforms that bound each text block (Slack: 3,000 per section).
 *
 * A part ends between blocks when one lies in its second half, else at a line break there, else at
 * the last space; only a word longer than a whole part is cut inside, and never inside an escape
 * such as `&amp;` or a surrogate pair. A link is never cut: one too long for a part is shown as
 * plain text. Formatting open at a cut is closed at the end of the part and opened again at the
 * start of the next, so each part renders on its own. Answers `[]` when the document renders to
 * nothing (an empty document, or one holding only a refused link without text).
 *
 * @throws RangeError when `maxLength` is below 100.
 */
export function splitMrkdwn(document: MarkdownDocument, maxLength: number): string[] {
  if (!(maxLength >= 100)) throw new RangeError(`maxLength must be at least 100, got ${maxLength}`);
  const pieces = boundPieces(mrkdwnPieces(document), maxLength);
  const parts: string[] = [];
  let start = 0;
  let open: readonly MrkdwnMark[] = [];
  while (start < pieces.length) {
    if (pieces[start]?.kind === 'break') {
      start += 1;
      continue;
    }
    const { cut, next } = fillPart(pieces, start, open, maxLength);
    const text =
      openText(open) + pieces.slice(start, cut.index).map(pieceText).join('') + closeText(cut.open);
    if (text.trim() !== '') parts.push(text);
    start = next;
    open = cut.open;
  }
  return parts;
}

/** Takes pieces from `start` while they fit; answers where the part ends and where the next begins. */
function fillPart(
  pieces: readonly MrkdwnPiece[],
  start: number,
  startOpen: readonly MrkdwnMark[],
  maxLength: number,
): { cut: Cut; next: number } {
  let open = startOpen;
  let length = openText(open).length;
  const cuts: Cut[] = [];
  for (let index = start; index < pieces.length; index += 1) {
    const piece = pieces[index] as MrkdwnPiece;
    const level = index > start ? cutLevel(pieces[index - 1] as MrkdwnPiece, piece, open) : null;
    if (level !== null) cuts.push({ index, level, length, open });
    const after = applyMarks(open, piece);
    const grown = length + pieceText(piece).length;
    if (index > start && grown + closeText(after).length > maxLength) {
      const cut = bestCut(cuts, maxLength) ?? { index, level: -1, length, open };
      return { cut, next: cut.level >= 0 ? cut.index + 1 : cut.index };
    }
    open = after;
    length = grown;
  }
  return { cut: { index: pieces.length, level: 2, length, open }, next: pieces.length };
}

/**
 * How good a part end between `before` and `piece` is, with `open` the marks open there, or null
 * where a part must not end.
 */
function cutLevel(before: MrkdwnPiece, piece: MrkdwnPiece, open: readonly MrkdwnMark[]): number | null {
  if (piece.kind === 'break') return piece.level;
  // Ending a part right after an opening mark or before a closing one would leave an empty span.
  if (before.kind === 'open' || piece.kind === 'close') return null;
  // A space in code is part of the code: a cut there is a last resort, and keeps the space.
  if (piece.kind === 'space') return open.some((mark) => mark.open.startsWith('`')) ? -1 : 0;
  return -1;
}

/** A block or line boundary in the second half of the part if there is one, else the last space, else any. */
function bestCut(cuts: readonly Cut[], maxLength: number): Cut | undefined {
  let best: Cut | undefined;
  for (const cut of cuts) {
    if (cut.level >= 1 && cut.length >= maxLength / 2 && (best === undefined || cut.level >= best.level)) {
      best = cut;
    }
  }
  return best ?? cuts.findLast((cut) => cut.level >= 0) ?? cuts.at(-1);
}

function applyMarks(open: readonly MrkdwnMark[], piece: MrkdwnPiece): readonly MrkdwnMark[] {
  if (piece.kind === 'open') return [...open, piece.mark];
  if (piece.kind === 'close') return open.slice(0, -1);
  return open;
}

const openText = (open: readonly MrkdwnMark[]): string => open.map((mark) => mark.open).join('');
const closeText = (open: readonly MrkdwnMark[]): string =>
  open
    .map((mark) => mark.close)
    .reverse()
    .join('');

/**
 * Makes every piece short enough to fit in a part together with the marks that may surround it:
 * a link too long becomes its plain text, and a word too long is cut between code points of its
 * raw text, so that no escape is ever cut.
 */
function boundPieces(pieces: readonly MrkdwnPiece[], maxLength: number): MrkdwnPiece[] {
  let depth = 0;
  let deepest = 0;
  for (const piece of pieces) {
    if (piece.kind === 'open') depth += 1;
    if (piece.kind === 'close') depth -= 1;
    deepest = Math.max(deepest, depth);
  }
  // Each open mark costs at most 4 units to open (```\n) and 4 to close, plus a zero-width space.
  const room = maxLength - deepest * 10;
  const bounded: MrkdwnPiece[] = [];
  for (const piece of pieces) {
    if (pieceText(piece).length <= room) bounded.push(piece);
    else if (piece.kind === 'raw') bounded.push(...boundPieces(textPieces(piece.fallback), room));
    else if (piece.kind === 'word') bounded.push(...cutWord(piece.text, room));
    else if (piece.kind === 'space') bounded.push({ kind: 'space', text: piece.text.slice(0, room) });
    else bounded.push(piece);
  }
  return bounded;
}

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

const REGIONAL_INDICATOR = /^\p{Regional_Indicator}$/u;

/** How far around a cut a boundary between graphemes is looked for: none people write is longer. */
const graphemeWindow = 32;

/**
 * Where to cut `points` (a word's code points) at `at` or before it, but after `from`: at the start
 * of the grapheme `at` falls in, so that a flag, an emoji sequence or a letter with its accents
 * stays whole (cut apart, the regional indicators after a cut would pair up into other flags); at
 * `at` itself when that grapheme began at `from` or is longer than the window. Only a window around
 * the cut is segmented: segmenting a whole long word costs far more than cutting it.
 */
function graphemeCut(points: readonly string[], from: number, at: number): number {
  // Regional indicators pair up into flags from the start of their run, however long: counted.
  if (REGIONAL_INDICATOR.test(points[at] ?? '')) {
    let run = at;
    while (run > from && REGIONAL_INDICATOR.test(points[run - 1] ?? '')) run -= 1;
    const cut = (at - run) % 2 === 0 ? at : at - 1;
    return cut > from ? cut : at;
  }
  const start = Math.max(from, at - graphemeWindow);
  let cut = at;
  let index = start;
  for (const { segment } of graphemes.segment(points.slice(start, at + graphemeWindow).join(''))) {
    if (index > at) break;
    if (index > from) cut = index;
    index += [...segment].length;
  }
  return index > at ? cut : at;
}

/**
 * A part of a cut word that starts a section guarded as a word that starts one is: its `>` would
 * start a quote there, and `@here` there be a mention. The room of a cut keeps the two characters
 * this may add.
 */
const startingSection = (part: string): string =>
  guardMentions(part.startsWith('>') ? `\u200b${part}` : part);

function cutWord(text: string, room: number): MrkdwnPiece[] {
  const words = cutWithin(text, room - 2);
  return words.map((word, index) =>
    index === 0 || word.kind !== 'word' ? word : { kind: 'word', text: startingSection(word.text) },
  );
}

function cutWithin(text: string, room: number): MrkdwnPiece[] {
  const points = [...text];
  const sizes = points.map((point) => pieceText({ kind: 'word', text: point }).length);
  const words: MrkdwnPiece[] = [];
  let from = 0;
  let length = 0;
  points.forEach((_point, index) => {
    const size = sizes[index] ?? 0;
    if (length + size > room && index > from) {
      const cut = graphemeCut(points, from, index);
      words.push({ kind: 'word', text: points.slice(from, cut).join('') });
      from = cut;
      length = sizes.slice(cut, index).reduce((sum, each) => sum + each, 0);
    }
    length += size;
  });
  if (from < points.length) words.push({ kind: 'word', text: points.slice(from).join('') });
  return words;
}

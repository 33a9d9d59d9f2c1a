import type { StepCounter } from './step-counter.js';

/** A table entry for "no such structure here". */
const NONE = -1;

/**
 * A bare link destination is read for at most this many characters; one that has not ended by then
 * is a link only if a `)` follows right there. Messages have always been read this way, so the limit
 * stays even though it no longer guards the parser's running time.
 */
const MAX_BARE_URL_LENGTH = 2048;

const SPACE = /\s/u;
/** `_` next to one of these is part of a word (snake_case), never an italic delimiter. */
const WORD_AFTER = /^[\p{L}\p{N}_]/u;

/** The delimiters that open and close bold (`*`) and italic (`_`). */
export type EmphasisDelimiter = '*' | '_';

/** A `[text](url)` link: `textEnd` is the index of its `]`, `end` the index just past its `)`. */
export interface LinkMatch {
  textEnd: number;
  url: string;
  end: number;
}

/**
 * Every answer the inline parser needs about one line, worked out in at most four passes over it: where
 * each backtick run's code span closes, which `[` opens a link, and where the next closing `*` or
 * `_` is. Finding these by scanning ahead from each opener, as a straightforward parser does, costs
 * quadratic time on a line full of unmatched markup; a table lookup does not.
 *
 * The tables describe the line as a whole, and they also hold inside a nested range (the text
 * between two delimiters, or of a link): the walk that found the range's end stepped over code spans
 * and links exactly as the tables do, so no code span or link the range asks about reaches past it.
 *
 * One index serves every line of a message in turn ({@link LineIndex.load}), so a message of many
 * short lines does not pay for many sets of tables.
 */
export class LineIndex {
  /** The line loaded last. */
  source = '';
  /** At the first backtick of a run, the run's length; 0 elsewhere. */
  private readonly runLengths: Int32Array;
  /** At the first backtick of a run, the start of the next run of the same length (its closer), or NONE. */
  private readonly spanCloses: Int32Array;
  /** At a `[` that opens a link, the index just past the link; NONE elsewhere. */
  private readonly linkEnds: Int32Array;
  private readonly linkTextEnds: Int32Array;
  private readonly linkUrlStarts: Int32Array;
  private readonly linkUrlEnds: Int32Array;
  /** From each index, the first `*` that can close bold, stepping over code spans and links; or the line's length. */
  private readonly starClosers: Int32Array;
  /** The same for `_` and italic. */
  private readonly underscoreClosers: Int32Array;

  /** The count of `(` minus `)` before each index. */
  private readonly depths: Int32Array;
  // Lookups that only serve to find the links. Each entry is an index, the line's length when there is none.
  /** The first whitespace at or after each index. */
  private readonly nextSpaces: Int32Array;
  /** The first non-whitespace at or after each index. */
  private readonly nextNonSpaces: Int32Array;
  /** The first `>)` at or after each index. */
  private readonly angleCloses: Int32Array;
  /** The first `)` at or after each index that no `(` in between balances. */
  private readonly parenCloses: Int32Array;
  /** The first `[` or `]` at or after each index, stepping over code spans. */
  private readonly brackets: Int32Array;
  /** While finding `parenCloses`: the latest `)` seen at each depth, offset by the line's length. */
  private readonly latestCloses: Int32Array;
  /** While pairing backtick runs: the latest run of each length. */
  private readonly latestRuns = new Map<number, number>();

  /**
   * An index for lines of at most `capacity` characters.
   * @param counter where steps are counted; a shared index is handed each parse's own counter.
   */
  constructor(
    capacity: number,
    public counter: StepCounter,
  ) {
    const table = () => new Int32Array(capacity + 1);
    this.runLengths = table();
    this.spanCloses = table();
    this.linkEnds = table();
    this.linkTextEnds = table();
    this.linkUrlStarts = table();
    this.linkUrlEnds = table();
    this.starClosers = table();
    this.underscoreClosers = table();
    this.depths = table();
    this.nextSpaces = table();
    this.nextNonSpaces = table();
    this.angleCloses = table();
    this.parenCloses = table();
    this.brackets = table();
    this.latestCloses = new Int32Array(2 * capacity + 1);
  }

  /** Builds the tables of `line`, replacing those of the previous one. */
  load(line: string): void {
    this.source = line;
    const { links, emphasis } = this.indexForward();
    // Most lines hold no link and many no `*` or `_`: the tables only those need are left unbuilt.
    if (links) {
      this.indexBackward();
      this.indexLinks();
    }
    if (emphasis) this.indexClosers();
  }

  /** The length of the backtick run starting at `index`. */
  runLength(index: number): number {
    return this.runLengths[index] ?? 0;
  }

  /** The start of the run that closes a code span opened by the run at `index`, if it lies before `end`. */
  codeSpanClose(index: number, end: number): number | null {
    const close = this.spanCloses[index] ?? NONE;
    return close !== NONE && close < end ? close : null;
  }

  /** The link opened by the `[` at `index`. */
  link(index: number): LinkMatch | null {
    const end = this.linkEnds[index] ?? NONE;
    if (end === NONE) return null;
    const url = this.source.slice(this.linkUrlStarts[index], this.linkUrlEnds[index]).trim();
    return { textEnd: this.linkTextEnds[index] ?? NONE, url, end };
  }

  /** The delimiter closing one opened just before `from`, if it lies before `end`. */
  closer(delimiter: EmphasisDelimiter, from: number, end: number): number | null {
    const closers = delimiter === '*' ? this.starClosers : this.underscoreClosers;
    const close = closers[from] ?? NONE;
    return close < end ? close : null;
  }

  /**
   * Where a left-to-right walk that has reached `index` goes next: past the whole code span or
   * unmatched backtick run starting there, past the whole link if `links` and one starts there, or
   * to the next character.
   */
  private next(index: number, links: boolean): number {
    const run = this.runLength(index);
    if (run > 0) {
      const close = this.spanCloses[index] ?? NONE;
      return (close === NONE ? index : close) + run;
    }
    const linkEnd = links ? (this.linkEnds[index] ?? NONE) : NONE;
    return linkEnd === NONE ? index + 1 : linkEnd;
  }

  /**
   * Pairs backtick runs (a code span closes at the next run of the same length) and counts
   * parentheses; also tells whether the line may hold a link (it has a `](`) and emphasis. Clears
   * what the previous line left in the tables every line reads: each entry is cleared as the walk
   * reaches it, before anything is written there.
   */
  private indexForward(): { links: boolean; emphasis: boolean } {
    const { source, counter, depths, runLengths, spanCloses, linkEnds } = this;
    this.latestRuns.clear();
    depths[0] = 0;
    let links = false;
    let emphasis = false;
    let runStart = NONE;
    let previousChar = '';
    for (let index = 0; index < source.length; index += 1) {
      counter.steps += 1;
      runLengths[index] = 0;
      spanCloses[index] = NONE;
      linkEnds[index] = NONE;
      const char = source.charAt(index);
      if (char === '`') {
        if (runStart === NONE) runStart = index;
      } else if (runStart !== NONE) {
        this.recordRun(runStart, index);
        runStart = NONE;
      }
      depths[index + 1] = (depths[index] ?? 0) + (char === '(' ? 1 : char === ')' ? -1 : 0);
      links ||= char === '(' && previousChar === ']';
      emphasis ||= char === '*' || char === '_';
      previousChar = char;
    }
    if (runStart !== NONE) this.recordRun(runStart, source.length);
    return { links, emphasis };
  }

  private recordRun(start: number, end: number): void {
    const run = end - start;
    this.runLengths[start] = run;
    const previous = this.latestRuns.get(run);
    if (previous !== undefined) this.spanCloses[previous] = start;
    this.latestRuns.set(run, start);
  }

  /** Fills the "first at or after each index" lookups, right to left so that each extends the next one. */
  private indexBackward(): void {
    const { source, counter, depths, nextSpaces, nextNonSpaces, angleCloses, parenCloses, brackets } = this;
    const length = source.length;
    nextSpaces[length] = length;
    nextNonSpaces[length] = length;
    angleCloses[length] = length;
    parenCloses[length] = length;
    brackets[length] = length;
    // The `)` closing depth d is the first `)` standing at depth d: before it the depth never falls below d.
    const latestCloses = this.latestCloses.fill(length, 0, 2 * length + 1);
    for (let index = length - 1; index >= 0; index -= 1) {
      counter.steps += 1;
      const char = source.charAt(index);
      const space = isSpace(char);
      nextSpaces[index] = space ? index : (nextSpaces[index + 1] ?? length);
      nextNonSpaces[index] = space ? (nextNonSpaces[index + 1] ?? length) : index;
      angleCloses[index] =
        char === '>' && source.charAt(index + 1) === ')' ? index : (angleCloses[index + 1] ?? length);
      const slot = (depths[index] ?? 0) + length;
      if (char === ')') latestCloses[slot] = index;
      parenCloses[index] = latestCloses[slot] ?? length;
      brackets[index] = char === '[' || char === ']' ? index : (brackets[this.next(index, false)] ?? length);
    }
  }

  /** A link is `[`, text without brackets outside code spans, `]`, then `(<url>)` or a bare `(url)`. */
  private indexLinks(): void {
    const { source, counter, brackets, nextSpaces, nextNonSpaces, angleCloses, parenCloses } = this;
    const length = source.length;
    for (let index = 0; index < length; index += 1) {
      counter.steps += 1;
      if (source.charAt(index) !== '[') continue;
      const textEnd = brackets[index + 1] ?? length;
      const paren = textEnd + 1;
      if (source.charAt(textEnd) !== ']' || source.charAt(paren) !== '(') continue;
      if (source.charAt(paren + 1) === '<') {
        const close = angleCloses[paren + 2] ?? length;
        // The URL is trimmed and must not be empty.
        if (close < length && (nextNonSpaces[paren + 2] ?? length) < close) {
          this.recordLink(index, textEnd, paren + 2, close, close + 2);
        }
        continue;
      }
      const urlStart = nextNonSpaces[paren + 1] ?? length;
      const urlEnd = Math.min(
        nextSpaces[urlStart] ?? length,
        parenCloses[urlStart] ?? length,
        urlStart + MAX_BARE_URL_LENGTH,
        length,
      );
      const closingParen = nextNonSpaces[urlEnd] ?? length;
      if (urlEnd > urlStart && source.charAt(closingParen) === ')') {
        this.recordLink(index, textEnd, urlStart, urlEnd, closingParen + 1);
      }
    }
  }

  private recordLink(index: number, textEnd: number, urlStart: number, urlEnd: number, end: number): void {
    this.linkEnds[index] = end;
    this.linkTextEnds[index] = textEnd;
    this.linkUrlStarts[index] = urlStart;
    this.linkUrlEnds[index] = urlEnd;
  }

  /** Right to left, so each entry is the one at the next position the closer search would visit. */
  private indexClosers(): void {
    const { source, counter, starClosers, underscoreClosers } = this;
    const length = source.length;
    starClosers[length] = length;
    underscoreClosers[length] = length;
    for (let index = length - 1; index >= 0; index -= 1) {
      counter.steps += 1;
      const char = source.charAt(index);
      // A closer follows a non-space; `_` must also not be followed by a word character (snake_case).
      const closes =
        index > 0 &&
        !isSpace(source.charAt(index - 1)) &&
        (char === '*' || (char === '_' && !WORD_AFTER.test(source.slice(index + 1, index + 3))));
      const next = this.next(index, true);
      starClosers[index] = closes && char === '*' ? index : (starClosers[next] ?? length);
      underscoreClosers[index] = closes && char === '_' ? index : (underscoreClosers[next] ?? length);
    }
  }
}

/** Whether one UTF-16 unit is whitespace as `\s` reads it, without a regular expression for ASCII. */
function isSpace(char: string): boolean {
  if (char < '\u0080') return char === ' ' || (char >= '\t' && char <= '\r');
  return SPACE.test(char);
}

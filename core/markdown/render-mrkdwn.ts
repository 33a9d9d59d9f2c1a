import type { Block, Inline, MarkdownDocument } from './ast.js';
import { renderPlainInlines } from './render-plain.js';
import { safeLinkUrl } from './safe-url.js';

/** A formatting span of Slack's mrkdwn, written as an opening and a closing string. */
export interface MrkdwnMark {
  open: string;
  close: string;
}

const BOLD: MrkdwnMark = { open: '*', close: '*' };
const ITALIC: MrkdwnMark = { open: '_', close: '_' };
const CODE: MrkdwnMark = { open: '`', close: '`' };
const PRE: MrkdwnMark = { open: '```\n', close: '\n```' };

/**
 * A piece of rendered mrkdwn. Text is kept raw (unescaped) so that a splitter can cut a long word
 * and escape each part: a cut can then never fall inside an entity such as `&amp;`.
 *
 * - `word`: text without whitespace; one unit, cut only when longer than a whole section.
 * - `space`: whitespace between words, where a section may end (the space is then dropped).
 * - `raw`: finished mrkdwn that must never be cut (a link `<url|text>`, a list bullet); `fallback`
 *   is raw text to show instead when it cannot fit in one section.
 * - `open` / `close`: the start and end of a formatting span; `gap` asks for a zero-width space on
 *   the outside, because Slack applies formatting only at word boundaries.
 * - `break`: a line break (`level` 1) or the blank line between blocks (`level` 2).
 */
export type MrkdwnPiece =
  | { kind: 'word'; text: string }
  | { kind: 'space'; text: string }
  | { kind: 'raw'; text: string; fallback: string }
  | { kind: 'open'; mark: MrkdwnMark; gap: boolean }
  | { kind: 'close'; mark: MrkdwnMark; gap: boolean }
  | { kind: 'break'; level: 1 | 2 };

const ZERO_WIDTH_SPACE = '\u200b';
const TILDE_GUARDED = `~${ZERO_WIDTH_SPACE}`;
/** A letter, digit, mark or `_` at the end, or the start, of a text: astral ones as whole characters. */
const ENDS_IN_WORD_CHARACTER = /[\p{L}\p{N}\p{M}_]$/u;
const STARTS_WITH_WORD_CHARACTER = /^[\p{L}\p{N}\p{M}_]/u;
/**
 * Slack has no escape for a backtick. In a code span the next one ends the span: it shows as
 * U+02CB (ˋ), which looks the same. In a code block only three in a row end it, and in other text
 * backticks would open code: a zero-width space after each keeps them apart.
 */
const inCodeSpan = (word: string): string => word.replaceAll('`', '\u02cb');
const inCodeBlock = (word: string): string => word.replace(/`(?=`)/g, `\`${ZERO_WIDTH_SPACE}`);
const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** Text as Slack must receive it: `&`, `<` and `>` are the only characters mrkdwn asks to escape. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/[&<>]/g, (char) => ENTITIES[char] ?? char);
}

/**
 * The document as Slack mrkdwn: `*bold*`, `_italic_`, `` `code` ``, code blocks between triple
 * backticks, list items as `• item`, links as `<url|text>`. Every `&`, `<` and `>` of the text is
 * escaped, so a message cannot write Slack's own syntax for links and mentions (`<!channel>`,
 * `<https://…|text>`). A link whose URL {@link safeLinkUrl} refuses shows its text only, as plain text
 * (its URL, without text).
 */
export function renderMrkdwn(document: MarkdownDocument): string {
  return mrkdwnPieces(document).map(pieceText).join('');
}

/** The document as {@link MrkdwnPiece}s, for splitting it into parts of bounded length. */
export function mrkdwnPieces(document: MarkdownDocument): MrkdwnPiece[] {
  const pieces: MrkdwnPiece[] = [];
  document.blocks.forEach((block, index) => {
    if (index > 0) pieces.push({ kind: 'break', level: 2 });
    pushBlock(pieces, block);
  });
  markGaps(pieces);
  return pieces;
}

/** The mrkdwn of one piece, where it stands in the flow of the document. */
export function pieceText(piece: MrkdwnPiece): string {
  switch (piece.kind) {
    case 'word':
    case 'space':
      return escapeMrkdwn(piece.text);
    case 'raw':
      return piece.text;
    case 'open':
      return piece.gap ? ZERO_WIDTH_SPACE + piece.mark.open : piece.mark.open;
    case 'close':
      return piece.gap ? piece.mark.close + ZERO_WIDTH_SPACE : piece.mark.close;
    case 'break':
      return piece.level === 1 ? '\n' : '\n\n';
  }
}

function pushBlock(pieces: MrkdwnPiece[], block: Block): void {
  switch (block.type) {
    case 'paragraph':
      pushInlines(pieces, block.children, false);
      return;
    case 'list':
      block.items.forEach((item, index) => {
        if (index > 0) pieces.push({ kind: 'break', level: 1 });
        pieces.push({ kind: 'raw', text: '• ', fallback: '• ' });
        pushInlines(pieces, item, false);
      });
      return;
    case 'codeBlock':
      pieces.push({ kind: 'open', mark: PRE, gap: false });
      pushText(pieces, block.value, inCodeBlock);
      pieces.push({ kind: 'close', mark: PRE, gap: false });
      return;
  }
}

function pushInlines(pieces: MrkdwnPiece[], inlines: readonly Inline[], inLink: boolean): void {
  for (const inline of inlines) pushInline(pieces, inline, inLink);
}

function pushInline(pieces: MrkdwnPiece[], inline: Inline, inLink: boolean): void {
  switch (inline.type) {
    case 'text':
      pushText(pieces, inline.value);
      return;
    case 'bold':
      pushSpan(pieces, BOLD, () => pushInlines(pieces, inline.children, inLink));
      return;
    case 'italic':
      pushSpan(pieces, ITALIC, () => pushInlines(pieces, inline.children, inLink));
      return;
    case 'code':
      pushSpan(pieces, CODE, () => pushText(pieces, inline.value, inCodeSpan));
      return;
    case 'break':
      pieces.push({ kind: 'break', level: 1 });
      return;
    case 'link':
      pushLink(pieces, inline.url, inline.children, inLink);
      return;
  }
}

function pushSpan(pieces: MrkdwnPiece[], mark: MrkdwnMark, pushContent: () => void): void {
  const start = pieces.length;
  pieces.push({ kind: 'open', mark, gap: false });
  pushContent();
  // An empty span would print its marks as text (`**`); it is left out instead.
  if (pieces.length === start + 1) pieces.pop();
  else pieces.push({ kind: 'close', mark, gap: false });
}

/**
 * Slack's own link syntax: the URL may not hold `|` (it ends the URL) and the label comes after the
 * first `|`. Formatting inside a label is not rendered by Slack, so the label is plain text.
 */
function pushLink(pieces: MrkdwnPiece[], url: string, children: readonly Inline[], inLink: boolean): void {
  const label = renderPlainInlines(children);
  const href = inLink ? null : safeLinkUrl(url);
  if (href === null) {
    pushText(pieces, label || url);
    return;
  }
  const target = escapeMrkdwn(href.replaceAll('|', '%7C'));
  const text = label === '' ? `<${target}>` : `<${target}|${escapeMrkdwn(guardMentions(label))}>`;
  pieces.push({ kind: 'raw', text, fallback: label === '' || label === href ? href : `${label} (${href})` });
}

/** Raw text as words, spaces and line breaks. */
export function textPieces(text: string): MrkdwnPiece[] {
  const pieces: MrkdwnPiece[] = [];
  pushText(pieces, text);
  return pieces;
}

/**
 * Text as words, spaces and line breaks, each word passed through `guard`. Outside code, words are
 * guarded against the markup Slack has and the specification's markdown does not: a word that
 * starts with `>` would start a quote where it starts a line (and any word may start a section of a
 * long message), `~x~` would be struck through, and backticks would open code. A zero-width space
 * before the `>`, and after each `~` and backtick, keeps Slack from reading them, without a visible
 * change, as `@here` and the other special mentions are kept from notifying. URLs are left whole,
 * for Slack to link them.
 */
function pushText(pieces: MrkdwnPiece[], text: string, guard: (word: string) => string = guardWord): void {
  text.split('\n').forEach((line, index) => {
    if (index > 0) pieces.push({ kind: 'break', level: 1 });
    for (const part of line.split(/(\s+)/)) {
      if (part === '') continue;
      if (/\s/.test(part)) pieces.push({ kind: 'space', text: part });
      else pieces.push({ kind: 'word', text: guard(part) });
    }
  });
}

/**
 * Slack reads `@here`, `@channel`, `@everyone` and `@group` typed as text (at the start of a word,
 * or after `(`, `>`, `*` or `_`, trailing dots, dashes or underscores allowed) as those mentions,
 * which notify and highlight as such, unlike a message's other words: a zero-width space after the
 * `@` keeps them words.
 */
const SPECIAL_MENTION = /(?<=^|[(>*_])@(?=(?:here|channel|everyone|group)[._-]*(?![\w|.-]))/gi;

const SCHEME_CHARACTER = /[a-z0-9+.-]/i;
const LETTER = /[a-z]/i;

/**
 * Where the URL a word holds starts (after a bracket, say), which a guard must leave whole: its
 * scheme's first letter before `://`, or `www.`; the word's length when it holds none. Found from
 * `://` backwards, in one pass: a pattern searched from every position would take time growing with
 * the square of a long word's length.
 */
function urlStart(word: string): number {
  let start = word.length;
  const separator = word.indexOf('://');
  if (separator > 0) {
    let from = separator;
    while (from > 0 && SCHEME_CHARACTER.test(word.charAt(from - 1))) from -= 1;
    while (from < separator && !LETTER.test(word.charAt(from))) from += 1;
    if (from < separator) start = from;
  }
  const www = word.search(/www\./i);
  return www !== -1 && www < start ? www : start;
}

/**
 * `word` with the special mentions typed before `end` kept words: what follows them is read past
 * `end`, so that one right before a URL (`@here:https://…`, `@here+https://…`) is seen as Slack sees it.
 */
function unmentioned(word: string, end = urlStart(word)): string {
  if (!word.includes('@')) return word;
  return word.replace(SPECIAL_MENTION, (mention: string, offset: number) =>
    offset < end ? `@${ZERO_WIDTH_SPACE}` : mention,
  );
}

/**
 * `text` with the special mentions typed in it kept words, as in the message's sections: for the
 * plain text Slack shows in notifications.
 */
export function guardMentions(text: string): string {
  return text.includes('@')
    ? text
        .split(/(\s+)/)
        .map((word) => unmentioned(word))
        .join('')
    : text;
}

function guardWord(word: string): string {
  const end = urlStart(word);
  if (end === 0) return word;
  const before = word.slice(0, end);
  const quoted = before.startsWith('>') ? ZERO_WIDTH_SPACE + before : before;
  const unstruck = quoted.includes('~') ? quoted.replaceAll('~', TILDE_GUARDED) : quoted;
  const guarded = unstruck.includes('`') ? unstruck.replaceAll('`', `\`${ZERO_WIDTH_SPACE}`) : unstruck;
  return unmentioned(guarded + word.slice(end), guarded.length);
}

/**
 * Slack formats `*x*` only where the marks touch whitespace or punctuation, so `2*3*4` would show
 * its asterisks. A zero-width space between a mark and a neighbouring letter or digit makes the
 * boundary Slack needs without a visible change.
 */
function markGaps(pieces: MrkdwnPiece[]): void {
  pieces.forEach((piece, index) => {
    if ((piece.kind !== 'open' && piece.kind !== 'close') || piece.mark === PRE) return;
    const before = pieces[index - 1];
    const after = pieces[index + 1];
    piece.gap =
      piece.kind === 'open'
        ? before?.kind === 'word' && ENDS_IN_WORD_CHARACTER.test(before.text)
        : after?.kind === 'word' && STARTS_WITH_WORD_CHARACTER.test(after.text);
  });
}

/**
 * Parse time of messages of the longest length the API accepts: plain prose is the baseline, then
 * come the slowest of a systematic family of adversarial messages, short pieces of markdown syntax
 * (unclosed brackets, link openings, delimiters, backtick runs, blocks) repeated to that length.
 */
import { parseMarkdown } from '../core/markdown/parse.js';
import { markdownFragments } from '../test/support/markdown-fragments.js';
import { opsPerSecond, report } from './measure.js';
import { sized } from './options.js';

const LENGTH = 4000;

/** Timed parses of each message that rank the family; the quick run ranks on one. */
const rankingParses = sized(5, 1);

/** Ends that wrap the whole message in emphasis, so that every structure inside is also parsed in a nested range. */
const WRAPPERS: ReadonlyArray<readonly [string, string]> = [
  ['', ''],
  ['_*', '*_'],
  ['*', ''],
];

/** `pattern` repeated, then cut, to `length` characters. */
const fill = (pattern: string, length: number) =>
  pattern.repeat(Math.ceil(length / pattern.length)).slice(0, length);

/**
 * Every pattern of one or two fragments inside every wrapper, and a fence line of spaces before a
 * two-word text (whose language-tag check once backtracked quadratically).
 */
function adversarialMessages(): string[] {
  const patterns = markdownFragments.flatMap((first) => [
    first,
    ...markdownFragments.map((second) => first + second),
  ]);
  const wrapped = WRAPPERS.flatMap(([prefix, suffix]) =>
    patterns.map((pattern) => prefix + fill(pattern, LENGTH - prefix.length - suffix.length) + suffix),
  );
  return [...wrapped, `\`\`\`${' '.repeat(LENGTH - 6)}x y`];
}

const perParse = (rate: number) => `${(1000 / rate).toFixed(3)} ms per parse`;

/** Prints the markdown figures: the baselines, then the adversarial family's slowest messages. */
async function benchmarkMarkdown(): Promise<void> {
  const prose = fill(
    'Deploy of the billing service finished, all checks green; the old nodes drain tonight. ',
    LENGTH,
  );
  const scan = await opsPerSecond(sized(200_000, 20_000), () => prose.indexOf('\u0000'));
  console.log(
    `reference: one String.prototype.indexOf scan of ${LENGTH} characters: ${scan.toFixed(0)} ops/s`,
  );
  const baseline = await opsPerSecond(sized(2_000, 100), () => parseMarkdown(prose));
  console.log(
    `baseline: parse of ${LENGTH} characters of plain prose: ${baseline.toFixed(0)} ops/s, ${perParse(baseline)}\n`,
  );

  // A quick pass ranks the family; the slowest few are then measured as carefully as the baseline.
  const messages = adversarialMessages();
  const ranked = messages
    .map((message) => {
      parseMarkdown(message);
      const started = performance.now();
      for (let i = 0; i < rankingParses; i += 1) parseMarkdown(message);
      return { message, time: performance.now() - started };
    })
    .sort((a, b) => b.time - a.time);
  const slowest: Array<{ message: string; rate: number }> = [];
  for (const { message } of ranked.slice(0, 5)) {
    slowest.push({ message, rate: await opsPerSecond(sized(500, 10), () => parseMarkdown(message)) });
  }
  slowest.sort((a, b) => a.rate - b.rate);
  for (const { message, rate } of slowest)
    report(`parse ${JSON.stringify(message.slice(0, 24))}…`, rate, baseline);
  const [worst] = slowest;
  if (worst) {
    console.log(
      `worst of ${messages.length} adversarial ${LENGTH}-character messages: ${perParse(worst.rate)}`,
    );
  }
}

await benchmarkMarkdown();

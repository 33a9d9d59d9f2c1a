import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { measureMarkdownParse } from '../../core/markdown/parse.js';
import { markdownFragments } from '../support/markdown-fragments.js';

/** Messages of about this length are compared with ones twice as long, the spec's maximum of 4000. */
const N = 2000;

/** A message shape: fixed ends around one or more patterns, each repeated the same number of times. */
interface Shape {
  prefix: string;
  patterns: string[];
  suffix: string;
}

const fragments = (min: number, max: number) =>
  fc
    .array(fc.constantFrom(...markdownFragments), { minLength: min, maxLength: max })
    .map((parts) => parts.join(''));

const shapes: fc.Arbitrary<Shape> = fc.record({
  prefix: fragments(0, 3),
  patterns: fc.array(fragments(1, 4), { minLength: 1, maxLength: 3 }),
  suffix: fragments(0, 3),
});

/**
 * The message of `shape` about `scale` times `N` characters long. Patterns repeat an even number of
 * times, so that doubling the message doubles its structure too: a fence or a delimiter left unpaired
 * in one message and not in the other would change the kind of work, not only its amount.
 */
function build({ prefix, patterns, suffix }: Shape, scale: 1 | 2 | 4): string {
  const pairs = Math.ceil(N / (2 * patterns.join('').length));
  return prefix + patterns.map((pattern) => pattern.repeat(2 * pairs * scale)).join('') + suffix;
}

/** Shapes known to have made earlier parsers quadratic, tried before the generated ones. */
const KNOWN: Shape[] = [
  { prefix: '_*', patterns: ['[]('], suffix: '*_' },
  { prefix: '', patterns: ['[a]('], suffix: '' },
  { prefix: '', patterns: ['*[a]('], suffix: '' },
  { prefix: '', patterns: ['[a]((('], suffix: '' },
  { prefix: '*', patterns: ['[x](<'], suffix: '' },
  { prefix: '', patterns: ['*_'], suffix: '' },
  { prefix: '', patterns: ['[', '`'], suffix: '' },
];

/**
 * Each character is examined by a handful of passes and by the walk that builds the document; this
 * bound leaves room for more of them, but not for a scan restarted per opener, which costs hundreds
 * of steps per character on the messages above.
 */
const STEPS_PER_CHARACTER = 16;

const steps = (source: string): number => measureMarkdownParse(source).steps;
const known = { examples: KNOWN.map((shape): [Shape] => [shape]) };

describe('parseMarkdown cost', () => {
  it('counts at least one step per character, so the figures below measure real work', () => {
    fc.assert(
      fc.property(shapes, (shape) => {
        const source = build(shape, 1);
        expect(steps(source)).toBeGreaterThanOrEqual(source.length);
      }),
      { numRuns: 50 },
    );
  });

  it('grows linearly: a message twice as long takes at most 2.3 times the steps', () => {
    fc.assert(
      fc.property(shapes, (shape) => {
        // From about 4,000 to about 8,000 characters: both past the fixed caps (a bare URL's 2,048
        // characters), whose crossing changes the work per character once, not the growth.
        const single = steps(build(shape, 2));
        const double = steps(build(shape, 4));
        expect(double, JSON.stringify(shape)).toBeLessThanOrEqual(2.3 * single);
      }),
      { numRuns: 300, ...known },
    );
  });

  it(`takes at most ${STEPS_PER_CHARACTER} steps per character, whatever the markup`, () => {
    fc.assert(
      fc.property(shapes, (shape) => {
        const source = build(shape, 2);
        expect(steps(source), JSON.stringify(shape)).toBeLessThanOrEqual(STEPS_PER_CHARACTER * source.length);
      }),
      { numRuns: 300, ...known },
    );
  });
});

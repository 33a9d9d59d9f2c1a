import { z } from 'zod';

/** Length in Unicode code points, as every length rule of the API counts (docs/behaviour.md#validation). */
export const codePointLength = (value: string): number => {
  let length = 0;
  for (const _ of value) length += 1;
  return length;
};

/**
 * Characters that show nothing: whitespace and separators, control and format characters (zero-width
 * space and joiners, word joiner, byte order mark, soft hyphen, direction marks...), the other
 * default-ignorable code points (variation selectors, Hangul fillers, tags...), and the blank
 * braille pattern.
 */
const invisible = /^[\s\p{Z}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\u2800]*$/u;

/** Whether a text shows nothing at all: empty, or only invisible characters (whitespace included). */
export const isBlank = (value: string): boolean => invisible.test(value);

const typeMessage = (expected: string) => (issue: { input: unknown }) =>
  issue.input === undefined ? 'is required' : `must be ${expected}`;

/**
 * A half of a surrogate pair without the other (JSON's `"\udc00"`): no character at all. UTF-8 cannot
 * hold one, so where text travels as UTF-8 (MongoDB's strings, the chat platforms' messages) it would
 * silently become U+FFFD or be refused.
 */
const unpairedSurrogate = /[\uD800-\uDFFF]/u;

/**
 * A string of `min` to `max` code points, each a character (no unpaired surrogate); JSON Schema
 * counts code points too, so the bounds are exact there.
 */
export const boundedText = (min: number, max: number) =>
  z
    .string({ error: typeMessage('a string') })
    .refine(
      (value) => {
        const length = codePointLength(value);
        return length >= min && length <= max;
      },
      min === 0 ? `must be at most ${max} characters` : `must be ${min} to ${max} characters`,
    )
    .refine(
      (value) => !unpairedSurrogate.test(value),
      'must be Unicode text: it holds half of a surrogate pair (e.g. "\\udc00") without the other',
    )
    .meta({ minLength: min, maxLength: max });

/** A finite number in `[min, max]`. */
export const boundedNumber = (min: number, max: number) =>
  z
    .number({ error: typeMessage('a number') })
    .refine(
      (value) => Number.isFinite(value) && value >= min && value <= max,
      `must be from ${min} to ${max}`,
    )
    .meta({ minimum: min, maximum: max });

/** A JSON object that refuses unknown fields. */
export const strictObject = <Shape extends z.ZodRawShape>(shape: Shape) =>
  z.strictObject(shape, { error: typeMessage('an object') });

/** An array of `min` to `max` entries. */
export const boundedArray = <Item extends z.ZodType>(item: Item, min: number, max: number) =>
  z
    .array(item, { error: typeMessage('an array') })
    .min(min, `must have ${min} to ${max} entries`)
    .max(max, `must have ${min} to ${max} entries`);

export { typeMessage };

/**
 * Characters that break a line of text or reorder what follows: control characters (line feed, tab,
 * NUL, escape…), the line and paragraph separators, and the bidirectional embeddings, overrides and
 * isolates (U+202A to U+202E, U+2066 to U+2069), with which a label could show another text.
 */
const lineBreaking = /[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069]/u;

/** What {@link oneLine} says of a text that holds one of them. */
export const oneLineMessage =
  'must be one line of text: no control characters (line breaks, tabs, U+0000 to U+001F, U+007F to U+009F), line or paragraph separators, or bidirectional controls';

/** Whether `value` is one line of text that shows as written (an API key's label). */
export const oneLine = (value: string): boolean => !lineBreaking.test(value);

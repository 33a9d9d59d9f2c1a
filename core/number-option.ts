/**
 * What a numeric option must be, as {@link checkNumberOption} checks it. A duration is waited out
 * by a timer; a lifetime only sets when stored state expires, which no timer waits for.
 */
export type NumberRule = 'count' | 'positive count' | 'duration' | 'positive duration' | 'positive lifetime';

/** The longest a Node timer waits: a longer one fires after 1 ms. */
const longestTimerMs = 2 ** 31 - 1;

const rules: Readonly<Record<NumberRule, { fits: (value: number) => boolean; what: string }>> = {
  count: { fits: (value) => Number.isInteger(value) && value >= 0, what: 'a whole number, 0 or more' },
  'positive count': {
    fits: (value) => Number.isInteger(value) && value >= 1,
    what: 'a whole number, 1 or more',
  },
  duration: {
    fits: (value) => value >= 0 && value <= longestTimerMs,
    what: `a number of milliseconds from 0 to ${longestTimerMs}`,
  },
  'positive duration': {
    fits: (value) => value > 0 && value <= longestTimerMs,
    what: `a number of milliseconds from 1 to ${longestTimerMs}`,
  },
  'positive lifetime': {
    fits: (value) => value > 0 && value < Infinity,
    what: 'a number of milliseconds, more than 0',
  },
};

/**
 * Throws a RangeError (`<owner>: <name> must be …, got …`) unless `value` is undefined or a number
 * that `rule` accepts. An option typed as a number may still come from configuration as NaN, a
 * string or Infinity, and would then fail every call later, or quietly turn a bound off, rather
 * than the creation now. Durations end where a timer can wait (about 24.8 days); lifetimes do not.
 */
export function checkNumberOption(owner: string, name: string, value: unknown, rule: NumberRule): void {
  if (value === undefined) return;
  const { fits, what } = rules[rule];
  if (typeof value !== 'number' || !fits(value)) {
    throw new RangeError(`${owner}: ${name} must be ${what}, got ${String(value)}`);
  }
}

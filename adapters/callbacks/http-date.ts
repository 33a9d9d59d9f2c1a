const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const month = `(?<month>${months.join('|')})`;
const time = '(?<hours>\\d{2}):(?<minutes>\\d{2}):(?<seconds>\\d{2})';
const day = 'Mon|Tue|Wed|Thu|Fri|Sat|Sun';
const longDay = 'Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday';

/** The three forms of RFC 9110 §5.6.7, with the same named parts so that one reader serves them all. */
const forms = [
  new RegExp(`^(?:${day}), (?<day>\\d{2}) ${month} (?<year>\\d{4}) ${time} GMT$`),
  new RegExp(`^(?:${longDay}), (?<day>\\d{2})-${month}-(?<year>\\d{2}) ${time} GMT$`),
  new RegExp(`^(?:${day}) ${month} (?<day>[ \\d]\\d) ${time} (?<year>\\d{4})$`),
];

/** RFC 9110: a two-digit year more than 50 years ahead is the most recent past year with those digits. */
function fullYear(text: string, now: number): number {
  if (text.length !== 2) return Number(text);
  const current = new Date(now).getUTCFullYear();
  const candidate = current - (current % 100) + Number(text);
  return candidate > current + 50 ? candidate - 100 : candidate;
}

/**
 * An HTTP-date (RFC 9110 §5.6.7: IMF-fixdate, or the obsolete RFC 850 and asctime forms, all in UTC)
 * as epoch milliseconds, or null when the text is none of them or names no real moment (31 Feb,
 * 25:00). Stricter than `Date.parse`, which also reads `-5` or `1.5` as dates.
 */
export function parseHttpDate(text: string, now: number): number | null {
  const parts = forms.map((form) => form.exec(text)?.groups).find((groups) => groups !== undefined);
  if (!parts) return null;
  const fields = {
    year: fullYear(parts.year ?? '', now),
    month: months.indexOf(parts.month ?? ''),
    day: Number(parts.day),
    hours: Number(parts.hours),
    minutes: Number(parts.minutes),
    seconds: Number(parts.seconds),
  };
  const date = new Date(0);
  date.setUTCFullYear(fields.year, fields.month, fields.day);
  date.setUTCHours(fields.hours, fields.minutes, fields.seconds);
  // Date rolls 31 Feb over into March and 25:00 into the next day: a real moment reads back unchanged.
  const readBack = {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth(),
    day: date.getUTCDate(),
    hours: date.getUTCHours(),
    minutes: date.getUTCMinutes(),
    seconds: date.getUTCSeconds(),
  };
  return JSON.stringify(readBack) === JSON.stringify(fields) ? date.getTime() : null;
}

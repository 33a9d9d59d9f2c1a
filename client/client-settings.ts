import type { RetryPolicy } from './retry.js';
import type { ClientOptions, WaitOptions } from './types.js';

/** A number an option may take: at least `min`, and finite unless `endless` (then `Infinity` too). */
export function checked(
  name: string,
  value: number | undefined,
  fallback: number,
  min: number,
  endless = false,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || Number.isNaN(value) || value < min || (!endless && value === Infinity)) {
    throw new RangeError(
      `${name} must be ${endless ? 'a number (or Infinity)' : 'a finite number'} of at least ${min}, got ${String(value)}`,
    );
  }
  return value;
}

/**
 * The options of `createClient` as it uses them, refused at creation when they could not work: a
 * base URL that is no absolute `http:` or `https:` URL (it would fail every call as a network
 * error) or has a query, a fragment or credentials, an API key that is no string or could not be
 * sent in a header, retry numbers and an attempt's time that are not finite.
 */
export function clientSettings(options: ClientOptions): {
  baseUrl: string;
  policy: RetryPolicy;
  attemptTimeoutMs: number;
} {
  const { baseUrl, apiKey, retry } = options;
  let parsed: URL | null = null;
  try {
    parsed = new URL(baseUrl);
  } catch {
    parsed = null;
  }
  if (parsed === null || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
    throw new TypeError(
      `createClient: baseUrl must be an absolute http: or https: URL, such as https://notify.example.com; got ${JSON.stringify(baseUrl)}`,
    );
  }
  // The API's paths are appended to the base URL as text: after a query or a fragment they would
  // land in it, and every call would go to the base's own path.
  if (parsed.search !== '' || parsed.hash !== '' || /[?#]/.test(baseUrl)) {
    throw new TypeError(
      `createClient: baseUrl must have no query or fragment, only a path prefix; got ${JSON.stringify(baseUrl)}`,
    );
  }
  // `fetch` refuses every URL with credentials, which would fail every call as a network error.
  if (parsed.username !== '' || parsed.password !== '') {
    throw new TypeError('createClient: baseUrl must carry no user name or password');
  }
  if (typeof apiKey !== 'string' || apiKey === '') {
    throw new TypeError('createClient: apiKey must be a non-empty string');
  }
  // What `fetch` refuses in a header (beyond Latin-1, a line break) would fail every call as if the
  // network were down, and what it trims would be another key: no key the service issues has either.
  if (!/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(apiKey)) {
    throw new TypeError('createClient: apiKey must be printable ASCII, without spaces at either end');
  }
  return {
    baseUrl: baseUrl.replace(/\/+$/, ''),
    policy: {
      maxAttempts: Math.floor(checked('createClient: retry.maxAttempts', retry?.maxAttempts, 5, 1)),
      baseDelayMs: checked('createClient: retry.baseDelayMs', retry?.baseDelayMs, 250, 0),
      maxDelayMs: checked('createClient: retry.maxDelayMs', retry?.maxDelayMs, 10_000, 0),
    },
    attemptTimeoutMs: attemptTimeout(options.attemptTimeoutMs),
  };
}

/** The timings of `waitForCompletion` as it uses them: numbers of at least 0, `Infinity` for never. */
export function waitSettings(options: WaitOptions): {
  timeoutMs: number;
  initialIntervalMs: number;
  maxIntervalMs: number;
} {
  const maxIntervalMs = checked('waitForCompletion: maxIntervalMs', options.maxIntervalMs, 30_000, 0, true);
  const initialIntervalMs = checked(
    'waitForCompletion: initialIntervalMs',
    options.initialIntervalMs,
    1000,
    0,
    true,
  );
  return {
    timeoutMs: checked('waitForCompletion: timeoutMs', options.timeoutMs, Infinity, 0, true),
    initialIntervalMs: Math.min(initialIntervalMs, maxIntervalMs),
    maxIntervalMs,
  };
}

/** The longest a Node timer waits (about 24.8 days): a longer one fires at once. */
const longestTimerMs = 2 ** 31 - 1;

/** `attemptTimeoutMs` as a timer takes it: whole milliseconds, at most a timer's longest. */
function attemptTimeout(value: number | undefined): number {
  const ms = Math.ceil(checked('createClient: attemptTimeoutMs', value, 60_000, 1));
  if (ms > longestTimerMs) {
    throw new RangeError(
      `createClient: attemptTimeoutMs must be at most ${longestTimerMs} (about 24.8 days), got ${String(value)}`,
    );
  }
  return ms;
}

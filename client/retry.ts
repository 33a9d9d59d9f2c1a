import { setLongTimeout } from './long-timeout.js';
import type { Sleep } from './types.js';

/** Retry settings with every default filled in. */
export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** Waits on a timer; the timer is cleared when the signal aborts (then the promise never settles). */
export const timerSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve) => {
    const cancel = setLongTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Runs `sleep`, but rejects with the signal's reason as soon as it aborts. */
export function pause(sleep: Sleep, ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return sleep(ms);
  signal.throwIfAborted();
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    sleep(ms, signal).then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * `Retry-After` in seconds: delta-seconds or an HTTP date (then relative to `now`, never negative).
 * Undefined when absent or unreadable; `Infinity` for more seconds than can be counted exactly.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  // More seconds than can be counted exactly read as endless: no wait that long is worth making.
  if (/^\d+$/.test(text)) return Number.isSafeInteger(Number(text)) ? Number(text) : Infinity;
  if (/^[+-]?\d/.test(text)) return undefined; // a malformed number, not an HTTP date
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/** "Full jitter" backoff after failed attempt number `attempt` (1-based): random in [0, min(max, base·2^(attempt-1))). */
export function backoffDelay(
  policy: RetryPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(random() * cap);
}

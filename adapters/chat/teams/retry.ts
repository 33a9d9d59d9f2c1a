import { HttpError } from '@microsoft/agents-hosting';
import { parseRetryAfter } from '../../callbacks/retry-after.js';

/** Retries of Bot Connector calls that failed for a passing reason. */
export interface TeamsRetryOptions {
  /**
   * How many times a call is tried again after a `429`, `412`, `502` or `504` (the answers
   * Microsoft asks bots to retry); 4 by default. Other failures are not retried: a network error or
   * a timeout leaves unknown whether a message went out, and a second one must not.
   */
  retries?: number;
  /** Pause before the first retry, doubling each time, with jitter (ms, default 1000). */
  minDelayMs?: number;
  /**
   * Longest pause between two attempts (ms, default 30,000). A `Retry-After` that asks for longer
   * ends the retries: the call fails rather than hold its caller that long.
   */
  maxDelayMs?: number;
}

/** {@link TeamsRetryOptions} with every default applied. */
export type RetryPolicy = Required<TeamsRetryOptions>;

/** The policy of a transport, from its options. */
export function retryPolicy(options: TeamsRetryOptions = {}): RetryPolicy {
  return { retries: 4, minDelayMs: 1000, maxDelayMs: 30_000, ...options };
}

/** Statuses Microsoft documents as passing for bots: throttled, precondition failed, bad gateway, gateway timeout. */
const retryableStatuses: ReadonlySet<number> = new Set([412, 429, 502, 504]);

/** What a retry loop needs besides the policy: waiting, chance and the time (injected in tests). */
export interface RetryEnvironment {
  sleep(ms: number): Promise<void>;
  /** A number in [0, 1). */
  random(): number;
  now(): number;
  /** Told of each retry before its pause. */
  onRetry?(status: number, delayMs: number): void;
}

/** Real timers, chance and time. */
export const realRetryEnvironment: RetryEnvironment = {
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
  now: Date.now,
};

/** The HTTP status of a failed Bot Connector call, or null when it failed without an answer. */
export function httpStatusOf(error: unknown): number | null {
  return error instanceof HttpError ? error.status : null;
}

/** The `error.code` of a failed Bot Connector call's body (`BotNotInConversationRoster`, …), or null. */
export function connectorErrorCodeOf(error: unknown): string | null {
  if (!(error instanceof HttpError)) return null;
  const code = (error.response.data as { error?: { code?: unknown } } | null)?.error?.code;
  return typeof code === 'string' ? code : null;
}

/**
 * The pause before retry number `attempt` (0 for the first retry) after `error`, or null when the
 * call must not be tried again. The pause doubles from `minDelayMs` up to `maxDelayMs`, drawn in its
 * upper half so that callers throttled together spread out; a longer `Retry-After` is honoured.
 */
export function retryDelay(
  error: unknown,
  attempt: number,
  policy: RetryPolicy,
  environment: Pick<RetryEnvironment, 'random' | 'now'>,
): number | null {
  const status = httpStatusOf(error);
  if (status === null || !retryableStatuses.has(status) || attempt >= policy.retries) return null;
  const ceiling = Math.min(policy.maxDelayMs, policy.minDelayMs * 2 ** attempt);
  const backoff = ceiling / 2 + (environment.random() * ceiling) / 2;
  const header =
    error instanceof HttpError ? (error.response.headers.get('retry-after') ?? undefined) : undefined;
  const asked = parseRetryAfter(header, environment.now()) ?? 0;
  if (asked > policy.maxDelayMs) return null;
  return Math.max(backoff, asked);
}

/** Runs `operation`, retrying as {@link retryDelay} says; rejects with the last failure. */
export async function withRetries<T>(
  operation: () => Promise<T>,
  policy: RetryPolicy,
  environment: RetryEnvironment = realRetryEnvironment,
): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await operation();
    } catch (error) {
      const delay = retryDelay(error, attempt, policy, environment);
      if (delay === null) throw error;
      environment.onRetry?.(httpStatusOf(error) ?? 0, delay);
      await environment.sleep(delay);
    }
  }
}

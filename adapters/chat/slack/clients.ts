import {
  ErrorCode,
  LogLevel,
  type Logger as SlackLogger,
  WebClient,
  type WebClientOptions,
} from '@slack/web-api';
import type { Logger } from '../../../core/adapter-kit.js';
import type { SlackInstallation } from './transport.js';
import { PostOutcomeUnknownError, RateLimitedError, webApiFetch } from './web-api-fetch.js';

/** Retries of a Web API call that failed for a passing reason. */
export interface SlackRetryOptions {
  /**
   * How many times a call is tried again after a `5xx` or a network failure, and, apart, after a
   * `429` (each time after waiting its `Retry-After`, and no longer); 3 by default. A `429` pauses
   * every call to the workspace while it is waited out. Errors Slack answers with `ok: false` are
   * never retried.
   */
  retries?: number;
  /** Pause before the first retry, doubling each time (ms, default 1000). */
  minDelayMs?: number;
  /** Longest pause between retries, besides what `Retry-After` asks for (ms, default 10000). */
  maxDelayMs?: number;
  /**
   * Longest `Retry-After` of a `429` that is waited out (ms, default 60,000). A `429` that asks for
   * longer fails the call at once, as a failed delivery, rather than pause every call to the
   * workspace that long (Slack posted nothing).
   */
  maxRetryAfterMs?: number;
}

/** How the transport's Web API clients are built. */
export interface SlackClientSettings {
  /** Base URL of the Web API, ending in `/`. */
  apiUrl: string;
  retry: SlackRetryOptions;
  /** Longest wait for each step of one HTTP attempt: connecting, the answer's headers, its whole body (ms). */
  requestTimeoutMs: number;
  /** Web API calls in flight at once, per workspace. */
  concurrency: number;
  logger: Logger;
}

/**
 * What stops the client's retries of a post whose outcome is unknown, and of a `429` that asks to
 * wait too long. The client hands its retry settings to `p-retry`, which gives up when
 * `onFailedAttempt` throws; the SDK's type of those settings does not name that member, hence this
 * object of its own.
 */
const neverRetried = {
  onFailedAttempt(error: unknown): void {
    const original = (error as { original?: unknown } | null)?.original;
    if (original instanceof PostOutcomeUnknownError || original instanceof RateLimitedError) {
      throw error;
    }
  },
};

/**
 * The `WebClient` of an installation, built on first use and kept: per workspace, the clients of
 * its last {@link tokensKept} bot tokens, so that a token that changes (Slack's token rotation, a
 * reinstall) lets the oldest go rather than piling clients up for as long as the process lives,
 * while two organizations whose installations of one workspace hold different tokens (one rotated
 * before the other) keep a client each.
 */
export type SlackClients = (installation: SlackInstallation) => WebClient;

/** How many bot tokens of one workspace keep their client. */
const tokensKept = 2;

/** The clients of every workspace the transport serves. */
export function slackClients(settings: SlackClientSettings): SlackClients {
  const clients = new Map<string, { botToken: string; client: WebClient }[]>();
  const options: WebClientOptions = {
    slackApiUrl: settings.apiUrl,
    maxRequestConcurrency: settings.concurrency,
    retryConfig: {
      retries: settings.retry.retries ?? 3,
      factor: 2,
      minTimeout: settings.retry.minDelayMs ?? 1000,
      maxTimeout: settings.retry.maxDelayMs ?? 10_000,
      randomize: true,
      ...neverRetried,
    },
    // The deadline is kept by the fetch: the client's own costs a transferable signal per call.
    fetch: webApiFetch({
      timeoutMs: settings.requestTimeoutMs,
      maxRetryAfterMs: settings.retry.maxRetryAfterMs ?? 60_000,
      rateLimitRetries: settings.retry.retries ?? 3,
      onRateLimited: (retryAfterSeconds, url) => {
        settings.logger.warn('Slack rate limit: waiting before retrying', {
          retryAfterSeconds,
          method: url.slice(settings.apiUrl.length),
        });
      },
    }),
    timeout: 0,
    rejectRateLimitedCalls: false,
    allowAbsoluteUrls: false,
    logger: quietLogger(settings.logger),
    logLevel: LogLevel.WARN,
  };
  return ({ teamId, botToken }) => {
    const kept = clients.get(teamId) ?? [];
    const found = kept.find((each) => each.botToken === botToken);
    if (found !== undefined) return found.client;
    const client = new WebClient(botToken, options);
    clients.set(teamId, [{ botToken, client }, ...kept.slice(0, tokensKept - 1)]);
    return client;
  };
}

/** The `error` of an `ok: false` answer of the Web API (`users_not_found`, …), or null for another failure. */
export function slackErrorCode(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const { code, data } = error as { code?: unknown; data?: { error?: unknown } };
  return code === ErrorCode.PlatformError && typeof data?.error === 'string' ? data.error : null;
}

/**
 * The SDK's own log lines, at warning level and above, into the library's logger. Lower levels are
 * dropped: at debug the SDK logs request bodies, that is message texts, which must stay out of logs.
 */
function quietLogger(logger: Logger): SlackLogger {
  const line = (parts: unknown[]): string => parts.map(String).join(' ');
  return {
    debug() {},
    info() {},
    warn: (...parts: unknown[]) => logger.warn(`Slack Web API: ${line(parts)}`),
    error: (...parts: unknown[]) => logger.error(`Slack Web API: ${line(parts)}`),
    setLevel() {},
    getLevel: () => LogLevel.WARN,
    setName() {},
  };
}

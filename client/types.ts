import type { CallbackBody } from '../core/schemas/callback.js';
import type { NotifyRequestInput } from '../core/schemas/notify-request.js';
import type {
  NotificationSent,
  RecipientResponse,
  RequestCreated,
  RequestStatus,
} from '../core/schemas/responses.js';

export type { NotificationSent, NotifyRequestInput, RecipientResponse, RequestCreated, RequestStatus };

/** The `response_request` object of a send (docs/http-api.md#request-body). */
export type ResponseRequestInput = NonNullable<NotifyRequestInput['response_request']>;

/** A fire-and-forget send: no `response_request`; answered with a `notification_id`. */
export type PlainNotifyRequest = Omit<NotifyRequestInput, 'response_request'> & {
  response_request?: undefined;
};

/** An interactive send: with `response_request`; answered with a `request_id`. */
export type InteractiveNotifyRequest = Omit<NotifyRequestInput, 'response_request'> & {
  response_request: ResponseRequestInput;
};

/** The answer `send` resolves to for a request of type `R`. */
export type SendResult<R extends NotifyRequestInput> = R extends { response_request: ResponseRequestInput }
  ? RequestCreated
  : R extends { response_request?: undefined }
    ? NotificationSent
    : NotificationSent | RequestCreated;

/** Waits `ms` milliseconds. The signal, when given, is aborted if the wait is no longer needed. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Retry settings; every field has a default. */
export interface RetryOptions {
  /** Attempts per call, the first one included (default 5). */
  maxAttempts?: number;
  /** Upper bound of the first backoff delay; it doubles per attempt (default 250 ms). */
  baseDelayMs?: number;
  /**
   * Upper bound of any backoff delay (default 10 000 ms). A `Retry-After` may ask for more, up to
   * 10 minutes; one that asks for longer ends the call with its error at once.
   */
  maxDelayMs?: number;
}

/** Settings of {@link createClient}. */
export interface ClientOptions {
  /** Where the service is, e.g. `https://notify.example.com` (a path prefix is kept; no query or fragment). */
  baseUrl: string;
  /** A personal API key (`X-API-Key`). */
  apiKey: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  retry?: RetryOptions;
  /**
   * Longest wait for one attempt's whole answer, in milliseconds (default 60 000): an attempt that
   * takes longer is abandoned as a network failure, and retried like one.
   */
  attemptTimeoutMs?: number;
  /** How to wait between attempts and polls (default: a timer). Handy in tests. */
  sleep?: Sleep;
}

/** Options of `send`. */
export interface SendOptions {
  /**
   * `Idempotency-Key` of this logical send (default: a random UUID); every retry reuses it. 1 to 255
   * printable ASCII characters, no space at either end: `send` rejects with a `TypeError` at once
   * for anything else.
   */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** Options of `status`. */
export interface StatusOptions {
  signal?: AbortSignal;
}

/**
 * Options of `waitForCompletion`. Each time is a number of at least 0, `Infinity` included;
 * `waitForCompletion` rejects with a `RangeError` for any other value.
 */
export interface WaitOptions {
  /**
   * Give up after this long, in real milliseconds, with a `NotifyTimeoutError` (default: never,
   * as `Infinity`). Any length is kept, beyond the 24.8 days a single Node timer can hold.
   */
  timeoutMs?: number;
  /** Pause after the first poll (default 1000 ms); it doubles after each poll. */
  initialIntervalMs?: number;
  /** Longest pause between polls (default 30 000 ms). */
  maxIntervalMs?: number;
  signal?: AbortSignal;
}

/** A client of the notification service's HTTP API. */
export interface NotifyClient {
  /**
   * Sends a notification (`POST /api/notify`). Retries network failures, 408, 409, 429 and 5xx with
   * the same `Idempotency-Key`, so a retried send reaches nobody twice; the error it rejects with
   * carries that key (`idempotencyKey`), to send again with it later.
   */
  send(request: InteractiveNotifyRequest, options?: SendOptions): Promise<RequestCreated>;
  send(request: PlainNotifyRequest, options?: SendOptions): Promise<NotificationSent>;
  send(request: NotifyRequestInput, options?: SendOptions): Promise<NotificationSent | RequestCreated>;
  /** Reads an interactive request's status (`GET /api/notify/status/{id}`); retries network failures, 408, 429 and 5xx. */
  status(requestId: string, options?: StatusOptions): Promise<RequestStatus>;
  /** Polls `status` with a growing interval until the request is `finished`, and resolves to that status. */
  waitForCompletion(requestId: string, options?: WaitOptions): Promise<RequestStatus>;
}

/** The body of a completion callback. */
export type CallbackEvent = CallbackBody;

/** Headers as `fetch`/`Request` give them, or as Node's `req.headers` (Express, Koa) does. */
export type CallbackHeaders = Headers | Record<string, string | string[] | undefined>;

/** Options of `verifyCallback`. */
export interface VerifyCallbackOptions {
  /** Largest accepted distance between `webhook-timestamp` and now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The current time in milliseconds since the epoch, like `Date.now` (the default). */
  now?: () => number;
}

/**
 * Every failure the library reports carries one of these codes. Only the HTTP layer turns a code into
 * a status; everything else speaks in codes.
 */
export type NotifyErrorCode =
  /** The request is malformed: bad JSON, a missing or invalid field, a malformed header or path. 400. */
  | 'invalid_request'
  /** The API key is missing or not valid. 401. */
  | 'unauthenticated'
  /** The resource does not exist, or belongs to another organization. 404. */
  | 'not_found'
  /** The same idempotency key is still being processed. 409. */
  | 'conflict'
  /** The body exceeds the size limit. 413. */
  | 'payload_too_large'
  /** A valid request that breaks a business rule (unknown recipients, reused idempotency key). 422. */
  | 'unprocessable'
  /** A rate limit was hit. 429. */
  | 'rate_limited'
  /** The message could not be delivered to some recipients. 500. */
  | 'delivery_failed'
  /** An unexpected failure; details are generic, the cause goes to the log. 500. */
  | 'internal'
  /** The storage backend cannot be reached; retrying later may succeed. 503. */
  | 'unavailable';

/** Options of a {@link NotifyError}. */
export interface NotifyErrorOptions {
  /** Seconds the caller should wait before retrying (sent as `Retry-After`). */
  retryAfterSeconds?: number;
  /** The underlying error, kept for logs; never shown to callers. */
  cause?: unknown;
}

/**
 * Codes of the answers a service gives all day long (a bad key, an unknown id, a rate limit): their
 * stack traces would say nothing, and capturing one costs several microseconds per request.
 */
const routine: ReadonlySet<NotifyErrorCode> = new Set([
  'invalid_request',
  'unauthenticated',
  'not_found',
  'conflict',
  'payload_too_large',
  'unprocessable',
  'rate_limited',
]);

/**
 * Marks the prototype of every copy of {@link NotifyError}: an application that loads one entry
 * point as CommonJS and another as ESM (or two installed copies) has two classes, and an error of one
 * must still be the library's error to the other, not an unexpected one answered 500.
 */
const notifyErrorBrand: unique symbol = Symbol.for('chat-notify.NotifyError');

/**
 * The single error type of the library: a code, a human-readable `details`, and an optional cause.
 * `instanceof NotifyError` holds for the errors of every copy of the library in a process.
 */
export class NotifyError extends Error {
  override readonly name = 'NotifyError';
  readonly code: NotifyErrorCode;
  /** Human-readable reason, safe to show to the caller. */
  readonly details: string;
  readonly retryAfterSeconds: number | undefined;

  /** Errors of routine answers (4xx codes) carry no stack frames; the others capture them as usual. */
  constructor(code: NotifyErrorCode, details: string, options: NotifyErrorOptions = {}) {
    const limit = Error.stackTraceLimit;
    if (routine.has(code)) Error.stackTraceLimit = 0;
    try {
      super(details, options.cause === undefined ? undefined : { cause: options.cause });
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.code = code;
    this.details = details;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

Object.defineProperty(NotifyError.prototype, notifyErrorBrand, { value: true });
Object.defineProperty(NotifyError, Symbol.hasInstance, {
  value(this: abstract new (...args: never[]) => unknown, value: unknown): boolean {
    // A subclass an application derives keeps the usual check: not every error of the library is one.
    if (this !== NotifyError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return (
      typeof value === 'object' &&
      value !== null &&
      notifyErrorBrand in value &&
      !Object.hasOwn(value, notifyErrorBrand)
    );
  },
});

/** Whether `error` is a {@link NotifyError}, optionally of the given code. */
export function isNotifyError(error: unknown, code?: NotifyErrorCode): error is NotifyError {
  return error instanceof NotifyError && (code === undefined || error.code === code);
}

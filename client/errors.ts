import type { RequestStatus } from './types.js';

/** What a {@link NotifyClientError} is built from. */
export interface NotifyClientErrorInit {
  /** The HTTP status of the answer, or 0 when no answer came (network failure, timeout). */
  status: number;
  /** The error body's `details`, or a description of what went wrong. */
  details: string;
  /** The answer's `Retry-After`, in seconds, when it carried one. */
  retryAfterSeconds?: number | undefined;
  /** The underlying error (for example fetch's `TypeError` on a network failure). */
  cause?: unknown;
  /** The `Idempotency-Key` the failed send carried. */
  idempotencyKey?: string | undefined;
}

/** A call to the service failed: an error answer, or no answer at all (`status` 0). */
export class NotifyClientError extends Error {
  override name = 'NotifyClientError';
  /** The HTTP status of the answer, or 0 when no answer came. */
  readonly status: number;
  /** The error body's `details`, or a description of what went wrong. */
  readonly details: string;
  /** The answer's `Retry-After`, in seconds, when it carried one. */
  readonly retryAfterSeconds?: number;
  /**
   * The `Idempotency-Key` of a failed `send` (the one given, or the one the client made): a send
   * repeated with it reaches nobody twice, whether or not the failed one went through.
   */
  readonly idempotencyKey?: string;

  constructor(init: NotifyClientErrorInit) {
    super(
      init.status === 0 ? init.details : `HTTP ${init.status}: ${init.details}`,
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.status = init.status;
    this.details = init.details;
    if (init.retryAfterSeconds !== undefined) this.retryAfterSeconds = init.retryAfterSeconds;
    if (init.idempotencyKey !== undefined) this.idempotencyKey = init.idempotencyKey;
  }
}

/** `waitForCompletion` gave up: the request was still pending when `timeoutMs` ran out. */
export class NotifyTimeoutError extends NotifyClientError {
  override name = 'NotifyTimeoutError';
  readonly requestId: string;
  readonly timeoutMs: number;
  /** The last status read before the time ran out, if any. */
  readonly lastStatus?: RequestStatus;

  constructor(requestId: string, timeoutMs: number, lastStatus: RequestStatus | undefined) {
    super({ status: 0, details: `Request ${requestId} did not finish within ${timeoutMs} ms` });
    this.requestId = requestId;
    this.timeoutMs = timeoutMs;
    if (lastStatus !== undefined) this.lastStatus = lastStatus;
  }
}

/** Why a callback was refused. */
export type CallbackVerificationReason =
  | 'missing_headers'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'malformed_signature'
  | 'signature_mismatch'
  | 'invalid_body';

/** A completion callback did not pass verification; answer it with 400 (or 401) and ignore it. */
export class CallbackVerificationError extends Error {
  override name = 'CallbackVerificationError';
  readonly reason: CallbackVerificationReason;

  constructor(reason: CallbackVerificationReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

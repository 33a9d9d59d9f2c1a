/** A completion callback whose every attempt failed; kept for operators to inspect and replay. */
export interface FailedCallback {
  requestId: string;
  organizationId: string;
  url: string;
  attempts: number;
  /** HTTP status of the last attempt, or null when no answer came (timeout, refused connection). */
  lastStatus: number | null;
  lastError: string;
  /** Epoch milliseconds. */
  failedAt: number;
}

/** Options of {@link FailedCallbackStore.add}. */
export interface FailedCallbackWriteOptions {
  /**
   * Forget the failure this many milliseconds after it is recorded (what is left of its request's
   * retention); absent, it is kept until taken. A positive, finite number.
   */
  ttlMs?: number;
}

/** Callbacks that could not be delivered. A failure past its `ttlMs` is read as absent. */
export interface FailedCallbackStore {
  /** Records a failure, replacing an earlier one of the same request (and its expiry). */
  add: (failure: FailedCallback, options?: FailedCallbackWriteOptions) => Promise<void>;
  /** Failures, oldest first; of one organization when given. */
  list: (organizationId?: string) => Promise<FailedCallback[]>;
  /** The failure of a request, or null; it stays kept. */
  get: (requestId: string) => Promise<FailedCallback | null>;
  /** Removes and answers the failure of a request, or null (so that exactly one replay takes it). */
  take: (requestId: string) => Promise<FailedCallback | null>;
}

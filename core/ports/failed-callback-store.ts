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

/** Callbacks that could not be delivered. */
export interface FailedCallbackStore {
  /** Records a failure, replacing an earlier one of the same request. */
  add: (failure: FailedCallback) => Promise<void>;
  /** Failures, oldest first; of one organization when given. */
  list: (organizationId?: string) => Promise<FailedCallback[]>;
  /** The failure of a request, or null; it stays kept. */
  get: (requestId: string) => Promise<FailedCallback | null>;
  /** Removes and answers the failure of a request, or null (so that exactly one replay takes it). */
  take: (requestId: string) => Promise<FailedCallback | null>;
}

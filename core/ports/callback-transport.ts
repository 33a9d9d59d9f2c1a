/** Resolves host names; injectable so that tests can stand in for DNS. */
export interface HostResolver {
  /** Every A and AAAA address of the host; empty when it does not resolve. Rejects on timeout. */
  resolve: (hostname: string) => Promise<string[]>;
}

/** One signed attempt to deliver a completion callback. */
export interface CallbackAttempt {
  url: string;
  /** `webhook-id`: the same on every attempt of one event. */
  webhookId: string;
  /** `webhook-timestamp`: Unix seconds of this attempt. */
  timestamp: number;
  /** The raw JSON body, exactly as signed. */
  body: string;
  /** `whsec_…` signing secret. */
  secret: string;
}

/** What became of an attempt. */
export type CallbackAttemptResult =
  /** A 2xx answer. */
  | { outcome: 'delivered'; status: number }
  /** `410 Gone`: the receiver wants no more attempts. */
  | { outcome: 'gone'; status: number }
  /**
   * Anything else; `retryAfterMs` when the receiver asked for a delay. `error` is kept with a failed
   * callback, which the organization's admins read; `cause`, what only the operator may read (how a
   * lookup of the receiver's host failed, which would tell internal names apart), is only logged.
   */
  | { outcome: 'failed'; status: number | null; error: string; retryAfterMs: number | null; cause?: string };

/** Delivers callbacks over HTTP, and resolves their hosts for validation. */
export interface CallbackTransport {
  resolver: HostResolver;
  /**
   * Development only: allows `http:` and loopback or private targets. Off by default; a host that
   * turns it on must say so in its log at start-up.
   */
  allowInsecure: boolean;
  /** Signs and sends one attempt. Must re-resolve the host, refuse non-public addresses and connect to the address it checked. */
  send: (attempt: CallbackAttempt) => Promise<CallbackAttemptResult>;
}

/** A request as the framework-neutral handler sees it; hosts build it from their framework's request. */
export interface HttpRequest {
  /** Upper-case method. */
  method: string;
  /** Path relative to where the handler is mounted, starting with `/`, without the query; as received. */
  path: string;
  query: URLSearchParams;
  /** Header values by lower-case name; a repeated header's values joined with `, ` (`; ` for `Cookie`). */
  headers: Readonly<Record<string, string | undefined>>;
  /** The raw body, exactly as received; empty when there was none. */
  body: Uint8Array;
  /**
   * Address of the client, for limits on failed authentication: the socket's address, or the one
   * the trusted proxies report (`NotifierOptions.trustProxy`).
   */
  clientAddress: string;
  /**
   * The protocol the client used as the trusted proxies report it in `X-Forwarded-Proto`
   * (`NotifierOptions.trustProxy`), lower-case (`https`): the entry the outermost of them appended,
   * counted from the right as for `X-Forwarded-For`. Absent without the header or without such an
   * entry, or when the peer of the connection is no trusted proxy: what a client claims itself.
   */
  forwardedProto?: string;
  /** Where the handler is mounted (`/notifications`), as the host says; absent at the root. */
  mountPath?: string;
}

/** An answer of the framework-neutral handler. */
export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * An HTTP endpoint a chat transport serves (the inbox's page and API; Slack's and Teams'
 * interaction endpoints). It receives the raw body, so it can check platform signatures over
 * the exact bytes, and it may answer before its processing completes.
 */
export interface Route {
  method: 'GET' | 'POST';
  /** Path relative to the mount point; `:name` segments become `params`. */
  path: string;
  handle(request: HttpRequest, params: Readonly<Record<string, string>>): Promise<HttpResponse>;
  /**
   * The largest body the route reads, in bytes: a larger one is answered `413` without reading on.
   * The API's 64 KiB by default; a platform's callbacks may carry more (Slack's carry the message).
   */
  maxBodyBytes?: number;
}

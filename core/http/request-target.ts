/** The path and query of a request target. */
export interface RequestTarget {
  /** Exactly as received: dot segments, repeated slashes and percent-escapes are left as they are. */
  path: string;
  query: URLSearchParams;
}

/**
 * Splits a request target into its path and query without resolving it against anything, so that a
 * route is reached only by a path that names it literally (`//host/api/notify` and
 * `/api/x/../notify` name no route). Null for a target that is not a path (absolute-form, `*`).
 */
export function splitTarget(target: string): RequestTarget | null {
  const mark = target.indexOf('?');
  const path = mark === -1 ? target : target.slice(0, mark);
  if (!path.startsWith('/')) return null;
  return { path, query: new URLSearchParams(mark === -1 ? '' : target.slice(mark + 1)) };
}

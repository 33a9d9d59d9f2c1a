/** The path and query of a request target. */
export interface RequestTarget {
  /** Exactly as received: dot segments, repeated slashes and percent-escapes are left as they are. */
  path: string;
  query: URLSearchParams;
}

/** The scheme and authority that start a target in absolute form. */
const schemeAndAuthority = /^https?:\/\/[^/?#]*/i;

/**
 * The origin form (`/path?query`) of a request target. A target in absolute form
 * (`http://host/path?query`), which RFC 9112 §3.2.2 requires servers to accept, loses its scheme
 * and authority, and gets the path `/` when it has none; any other target is returned as it is.
 * Hosts that match a prefix of the target themselves call it first.
 */
export function originForm(target: string): string {
  if (target.startsWith('/')) return target;
  const absolute = schemeAndAuthority.exec(target);
  if (!absolute) return target;
  const rest = target.slice(absolute[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/**
 * Splits a request target into its path and query without resolving it against anything, so that a
 * route is reached only by a path that names it literally (`//host/api/notify` and
 * `/api/x/../notify` name no route). A target in absolute form is read in its origin form. Null for
 * a target that is not a path (`*`, `host:port`).
 */
export function splitTarget(target: string): RequestTarget | null {
  const origin = originForm(target);
  const mark = origin.indexOf('?');
  const path = mark === -1 ? origin : origin.slice(0, mark);
  if (!path.startsWith('/')) return null;
  return { path, query: new URLSearchParams(mark === -1 ? '' : origin.slice(mark + 1)) };
}

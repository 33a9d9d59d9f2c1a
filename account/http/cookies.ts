/** Cookies of a `Cookie` header by name; the first of a repeated name wins, as browsers send the most specific first. */
export function parseCookies(header: string | undefined): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const equals = part.indexOf('=');
    if (equals === -1) continue;
    const name = part.slice(0, equals).trim();
    if (name === '' || name in cookies) continue;
    cookies[name] = part.slice(equals + 1).trim();
  }
  return cookies;
}

/** Attributes of a cookie the account pages set. */
export interface CookieOptions {
  /** Seconds until it expires; absent for a cookie that ends with the browser session, 0 to delete it. */
  maxAgeSeconds?: number;
  /** Sent over https only. */
  secure: boolean;
}

/**
 * A `Set-Cookie` value: always `HttpOnly` (no script reads it), `SameSite=Lax` (not sent on
 * cross-site posts) and `Path=/`, `Secure` when asked. Values are base62 and need no encoding.
 */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  return [
    `${name}=${value}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Lax',
    ...(options.maxAgeSeconds === undefined ? [] : [`Max-Age=${options.maxAgeSeconds}`]),
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}

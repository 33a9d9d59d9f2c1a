const origin = 'http://origin.invalid';

/**
 * `next` when it is a path of this site (`/account?x=1`), else null: never another origin
 * (`//evil.test`, `/\evil.test`, `https://…`, nor `/.//evil.test`, which resolves to the first), so
 * a link to the sign-in page cannot send a person elsewhere once signed in.
 */
export function safeNextPath(next: string | null | undefined): string | null {
  if (!next?.startsWith('/') || next.startsWith('//')) return null;
  // Browsers read a backslash as a slash and drop tabs and newlines in URLs.
  if ([...next].some((char) => char === '\\' || char.trim() === '' || char.charCodeAt(0) < 0x20)) return null;
  try {
    const url = new URL(next, origin);
    // Resolving dot segments can make a scheme-relative path: `/.//evil.test` is `//evil.test`.
    if (url.origin !== origin || url.pathname.startsWith('//')) return null;
    return `${url.pathname}${url.search}`;
  } catch {
    return null;
  }
}

/** Schemes a rendered link may use; everything else (javascript:, data:, vbscript:, file:, …) is refused. */
const ALLOWED_PROTOCOLS: ReadonlySet<string> = new Set(['http:', 'https:', 'mailto:']);

/**
 * The href to emit for a link written as `url`, or null when the link must not be clickable.
 *
 * The URL is trimmed and parsed with the WHATWG parser, the same one browsers use, so tricks such as
 * `JaVaScRiPt:`, leading spaces or tabs inside the scheme are judged exactly as a browser would read
 * them. Relative and unparsable URLs are refused: a message has no base to resolve them against.
 * The result is the parser's serialization; it is not HTML-escaped, that is the renderer's job.
 */
export function safeLinkUrl(url: string): string | null {
  const candidate = url.trim();
  if (candidate === '') return null;
  let parsed: URL;
  try {
    parsed = new URL(candidate);
  } catch {
    return null;
  }
  return ALLOWED_PROTOCOLS.has(parsed.protocol) ? parsed.href : null;
}

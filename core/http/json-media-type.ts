/**
 * Whether a `Content-Type` names JSON (`application/json`, any case, parameters allowed). Routes that
 * take JSON refuse anything else, so that a browser cannot post to them from another site without
 * a CORS preflight: `text/plain` and form types are what a cross-site form may send unasked.
 */
export const isJsonMediaType = (contentType: string | undefined): boolean =>
  contentType?.split(';')[0]?.trim().toLowerCase() === 'application/json';

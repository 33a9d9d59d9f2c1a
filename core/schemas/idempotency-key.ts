/**
 * An `Idempotency-Key` as a caller can send it: 1 to 255 printable ASCII characters, no space at
 * either end (HTTP drops those from a header's value, so such a key would arrive as another one).
 */
export const idempotencyKeyPattern = /^[\x21-\x7E](?:[\x20-\x7E]{0,253}[\x21-\x7E])?$/;

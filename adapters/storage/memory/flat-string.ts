/**
 * `value` as one flat string. Strings built a piece at a time (ids drawn a character at a time)
 * are ropes: a 28-character id is a dozen nodes and about 450 bytes until something flattens it,
 * and a map does not flatten the keys it hashes. Reading a character flattens it in place, and the
 * collector then drops the rope's nodes, leaving about 48 bytes: worth it for strings a store keeps.
 */
export function flatString(value: string): string {
  value.charCodeAt(0);
  return value;
}

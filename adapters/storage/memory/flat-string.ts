/**
 * `value` as one flat string. Strings built a piece at a time (a key made of a transport's scope, a
 * prefix and an id; a record of two lines) are ropes, a node per piece on top of the pieces, until
 * something flattens them, and a map does not flatten the keys it hashes. Reading a character
 * flattens it in place, and the collector then drops the rope's nodes: worth it for strings a store
 * keeps.
 */
export function flatString(value: string): string {
  value.charCodeAt(0);
  return value;
}

/**
 * Throws a RangeError (`<owner>: <name> must be an absolute http: or https: URL, got …`) unless
 * `value` is undefined or such a URL. A URL without its scheme (`localhost:3000/api/`) or of another
 * scheme would otherwise be taken, and every call to it fail later, one by one.
 */
export function checkHttpUrlOption(owner: string, name: string, value: unknown): void {
  if (value === undefined) return;
  const protocol = typeof value === 'string' && URL.canParse(value) ? new URL(value).protocol : null;
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new RangeError(`${owner}: ${name} must be an absolute http: or https: URL, got ${String(value)}`);
  }
}

/**
 * Throws a RangeError unless the first pause of a retry schedule is no longer than its longest:
 * `minDelayMs` above `maxDelayMs` (given, or by their defaults) would make every pause the longest.
 */
export function checkDelayRange(owner: string, minDelayMs: number, maxDelayMs: number): void {
  if (minDelayMs > maxDelayMs) {
    throw new RangeError(
      `${owner}: retry.minDelayMs (${minDelayMs}) must not be above retry.maxDelayMs (${maxDelayMs})`,
    );
  }
}

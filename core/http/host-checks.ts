/**
 * Refuses, at mounting, what a host cannot serve: a host of `host` (`notifyRouter`,
 * `notifyMiddleware`) serves anything with a `handle` of the neutral HTTP handler, a notifier or
 * the account pages. From plain JavaScript a missing one would otherwise fail every request.
 */
export function checkServed(host: string, served: unknown): void {
  if (
    typeof served !== 'object' ||
    served === null ||
    typeof (served as { handle?: unknown }).handle !== 'function'
  ) {
    throw new TypeError(
      `${host} needs what it serves: a notifier (createNotifier(...)) or the account pages (accountPages(...))`,
    );
  }
}

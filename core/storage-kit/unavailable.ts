import { NotifyError } from '../errors.js';

/**
 * What a store throws for `error`: the library's retryable `unavailable` error (503 with
 * `Retry-After`) when the adapter's `isUnreachable` says the backend cannot be reached, keeping the
 * driver's error as the cause; any other error unchanged. One mapping for every storage adapter.
 */
export function toStorageError(error: unknown, isUnreachable: (error: unknown) => boolean): unknown {
  if (error instanceof NotifyError || !isUnreachable(error)) return error;
  return new NotifyError('unavailable', 'Storage is temporarily unavailable', {
    retryAfterSeconds: 1,
    cause: error,
  });
}

/** An object whose members are all asynchronous functions: a store. */
type AsyncMethods = Record<string, (...args: never[]) => Promise<unknown>>;

/**
 * The same store, each of whose methods reports an unreachable backend as
 * `NotifyError('unavailable')` (see {@link toStorageError}) and lets every other error through.
 */
export function reportUnavailable<T extends AsyncMethods>(
  store: T,
  isUnreachable: (error: unknown) => boolean,
): T {
  const guarded: Record<string, (...args: never[]) => Promise<unknown>> = {};
  for (const [name, method] of Object.entries(store)) {
    guarded[name] = async (...args) => {
      try {
        return await method(...args);
      } catch (error) {
        throw toStorageError(error, isUnreachable);
      }
    };
  }
  return guarded as T;
}

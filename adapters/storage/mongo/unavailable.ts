import { NotifyError } from '../../../core/errors.js';

/**
 * Driver errors that mean "the server cannot be reached right now": the connection or its pool
 * failed, no server could be selected, or the client or topology was closed. Matched by name rather
 * than `instanceof`, so that a second copy of the driver in the caller's tree is recognized too.
 */
const connectionErrorNames = new Set([
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoPoolClearedError',
  'PoolClearedOnNetworkError',
  'MongoPoolClosedError',
  'MongoWaitQueueTimeoutError',
  'MongoServerSelectionError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MongoClientClosedError',
  'MongoServerClosedError',
]);

/**
 * Server answers that mean the same during a failover or a shutdown: no writable primary, or the
 * node is going away (the driver's retryable-read codes).
 */
const unavailableServerCodes = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  9001, // SocketException
  10058, // LegacyNotPrimary
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
]);

/** Whether `error` says the MongoDB server is unreachable (as opposed to a bad operation). */
export function isUnavailableError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (connectionErrorNames.has(error.name)) return true;
  const code: unknown = 'code' in error ? error.code : undefined;
  return error.name.startsWith('Mongo') && typeof code === 'number' && unavailableServerCodes.has(code);
}

/** The library's error for an unreachable store, keeping the driver's error as the cause. */
export function toStorageError(error: unknown): unknown {
  if (!isUnavailableError(error)) return error;
  return new NotifyError('unavailable', 'Storage is temporarily unavailable', {
    retryAfterSeconds: 1,
    cause: error,
  });
}

/** An object whose members are all asynchronous functions: a store. */
type AsyncMethods = Record<string, (...args: never[]) => Promise<unknown>>;

/**
 * The same store, each of whose methods reports an unreachable server as
 * `NotifyError('unavailable')` and lets every other error through unchanged.
 */
export function reportUnavailable<T extends AsyncMethods>(store: T): T {
  const guarded: Record<string, (...args: never[]) => Promise<unknown>> = {};
  for (const [name, method] of Object.entries(store)) {
    guarded[name] = async (...args) => {
      try {
        return await method(...args);
      } catch (error) {
        throw toStorageError(error);
      }
    };
  }
  return guarded as T;
}

/** Whether `error` is a duplicate-key error (E11000) of a unique index. */
export function isDuplicateKeyError(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === 11000;
}

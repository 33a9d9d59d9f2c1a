import { reportUnavailable, toStorageError } from '../../../core/adapter-kit.js';

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
  // A bulk write wraps a failure of the driver's own (a lost connection, no server selected) as the
  // answer it got, with neither a code nor a cause.
  const answer = (error as { errorResponse?: unknown }).errorResponse;
  if (error.name === 'MongoBulkWriteError' && answer instanceof Error) return isUnavailableError(answer);
  const code: unknown = 'code' in error ? error.code : undefined;
  return error.name.startsWith('Mongo') && typeof code === 'number' && unavailableServerCodes.has(code);
}

/** {@link toStorageError} of the core, with MongoDB's notion of an unreachable server. */
export const toMongoStorageError = (error: unknown): unknown => toStorageError(error, isUnavailableError);

/** {@link reportUnavailable} of the core, with MongoDB's notion of an unreachable server. */
export const guardMongoStore = <T extends Record<string, (...args: never[]) => Promise<unknown>>>(
  store: T,
): T => reportUnavailable(store, isUnavailableError);

/** Whether `error` is a duplicate-key error (E11000) of a unique index. */
export function isDuplicateKeyError(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === 11000;
}

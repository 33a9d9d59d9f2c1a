import {
  ClientClosedError,
  ClientOfflineError,
  ConnectionTimeoutError,
  DisconnectsClientError,
  ReconnectStrategyError,
  SocketClosedUnexpectedlyError,
  SocketTimeoutError,
  TimeoutError,
} from 'redis';
import { toStorageError } from '../../../core/adapter-kit.js';

/** node-redis errors that mean the server cannot be reached right now, whatever the command. */
const connectionErrorTypes = [
  ClientClosedError,
  ClientOfflineError,
  ConnectionTimeoutError,
  DisconnectsClientError,
  ReconnectStrategyError,
  SocketClosedUnexpectedlyError,
  SocketTimeoutError,
  TimeoutError,
];

// The same errors by message, for a client loaded from another copy of @redis/client, where
// instanceof fails; these texts are fixed by the library's error constructors.
const connectionMessages = new Set([
  'The client is closed',
  'The client is offline',
  'Connection timeout',
  'Disconnects client',
  'Socket closed unexpectedly',
  'The queue is full',
]);

/** Codes of Node's socket and DNS errors that mean the server is out of reach. */
const socketErrorCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * Error replies of a server that is up but cannot serve now: loading, failing over, stuck in a
 * script, or refusing writes (out of memory under `noeviction`, too few replicas for
 * `min-replicas-to-write`, a snapshot that failed under `stop-writes-on-bgsave-error`) until an
 * operator or the data's expiry makes room.
 */
const transientReplyPrefixes = [
  'LOADING ',
  'BUSY ',
  'MASTERDOWN ',
  'TRYAGAIN ',
  'CLUSTERDOWN ',
  'READONLY ',
  'OOM ',
  'NOREPLICAS ',
  'MISCONF ',
];

/**
 * Redis 6 and earlier wrap the error of a command a script ran, e.g.
 * `ERR Error running script (call to f_…): @user_script:1: -OOM command not allowed …`: a script's
 * write refused for one of the reasons above is as passing as the command's own.
 */
const scriptWrapped = new RegExp(
  `^ERR Error running script .*?-(?:${transientReplyPrefixes.map((prefix) => prefix.trim()).join('|')}) `,
);

const hasCode = (error: object): boolean =>
  'code' in error && typeof error.code === 'string' && socketErrorCodes.has(error.code);

/** Whether `error` (or what it wraps, a few levels deep) says the Redis server cannot be reached. */
export function isConnectionError(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false;
  if (connectionErrorTypes.some((type) => error instanceof type)) return true;
  if (hasCode(error)) return true;
  if (error instanceof Error) {
    if (connectionMessages.has(error.message)) return true;
    if (transientReplyPrefixes.some((prefix) => error.message.startsWith(prefix))) return true;
    if (scriptWrapped.test(error.message)) return true;
    if (error instanceof AggregateError && error.errors.some((e) => isConnectionError(e, depth + 1)))
      return true;
    if (isConnectionError(error.cause, depth + 1)) return true;
  }
  return false;
}

/** {@link toStorageError} of the core, with node-redis's notion of an unreachable server. */
export const toRedisStorageError = (error: unknown): unknown => toStorageError(error, isConnectionError);

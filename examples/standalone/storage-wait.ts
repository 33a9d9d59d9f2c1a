import { setTimeout as sleep } from 'node:timers/promises';
import { isNotifyError, type Logger } from '../../core/index.js';
import type { OpenedStorage } from './open-storage.js';

/** How long start-up may wait for storage, and the setting that said so (named when it runs out). */
export interface StorageBudget {
  seconds: number;
  setting: string;
}

/** Options of {@link waitForStorage}. */
export interface StorageWaitOptions {
  /** The storage as logs may show it (password masked). */
  target: string;
  /** Without one, waits as long as it takes. */
  budget?: StorageBudget;
  logger: Logger;
  /** Stops the wait (a signal during start-up). */
  signal?: AbortSignal;
  /** Told why each try failed, so that the health answer can say it. */
  onFailure(reason: string): void;
}

/**
 * A failure that waiting does not mend: a driver that is not installed, a password or database the
 * server refuses. The wait gives up on it at once, with its message.
 */
export class StorageSettingError extends Error {}

/**
 * Answers of a server that waiting does not change: a wrong password or user, none given where one
 * is needed, a user without the right to a command, no such database.
 */
const refusedSetting =
  /WRONGPASS|NOAUTH|NOPERM|invalid password|called without any password|DB index is out of range|Authentication failed/i;

/** `error` as a {@link StorageSettingError} when the server refused the setting, else as it is. */
export function asSettingError(error: unknown, target: string): unknown {
  const reason = describeError(error);
  return refusedSetting.test(reason)
    ? new StorageSettingError(`storage ${target} refused the setting: ${reason}`)
    : error;
}

const firstDelayMs = 200;
const longestDelayMs = 5_000;

/** The pause after the `attempt`-th failed try (1-based): doubling from 200 ms, at most 5 s. */
export const retryDelayMs = (attempt: number): number =>
  Math.min(firstDelayMs * 2 ** (attempt - 1), longestDelayMs);

/**
 * An error's message, also for the nameless ones (`AggregateError` of a dual-stack connect, bare
 * codes), with the driver's reply it wraps (`Storage is temporarily unavailable (LOADING …)`).
 */
export function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0)
    return error.errors.map(describeError).join('; ');
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const message = error.message || (typeof code === 'string' ? code : error.name);
    return error.cause === undefined ? message : `${message} (${describeError(error.cause)})`;
  }
  return String(error);
}

/** The longest one try may take: a server that takes the connection and never answers fails it. */
const longestTryMs = 10_000;

/** `work`, or the reason of `signal` once it aborts, whichever comes first. */
function beforeAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/**
 * One try: opens the storage, then writes a short-lived record, as every request does. A server
 * that connects yet cannot serve (Redis loading its data, out of memory, a read-only replica)
 * fails the try rather than the start. The try ends within 10 s and the budget's end (a second
 * after it at most): what it opened meanwhile is closed.
 */
async function tryToOpen(
  open: (signal: AbortSignal) => Promise<OpenedStorage>,
  deadline: number,
  target: string,
): Promise<OpenedStorage> {
  // A second at least, even at the budget's end: the last try, too, may fail for a reason to tell.
  const limitMs = Math.min(longestTryMs, Math.max(1_000, deadline - Date.now()));
  const signal = AbortSignal.timeout(limitMs);
  const opening = open(signal);
  try {
    const opened = await beforeAbort(opening, signal);
    await beforeAbort(opened.storage.transportState.set('start-up-probe', '1', { ttlMs: 60_000 }), signal);
    return opened;
  } catch (error) {
    opening.then((late) => late.close()).catch(() => undefined);
    // A server that takes the connection without a password may refuse the first command for it.
    if (error instanceof StorageSettingError) throw error;
    if (!signal.aborted) throw asSettingError(error, target);
    throw new Error(`no answer within ${limitMs / 1000} s`);
  }
}

/** When a wait for storage that `options` describe runs out (ms since the epoch), from now. */
export const storageDeadline = (options: Pick<StorageWaitOptions, 'budget'>): number =>
  options.budget === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.budget.seconds * 1000;

/**
 * Runs `step` until it succeeds, trying again with back-off while what it throws may pass, until
 * `deadline` (an error that names the budget's setting), the signal stops the wait or it throws what
 * waiting will not mend. Each failed try is logged at warn with the pause before the next.
 */
async function retrying<T>(
  step: () => Promise<T>,
  passing: (error: unknown) => boolean,
  deadline: number,
  options: StorageWaitOptions,
  release: (done: T) => Promise<void>,
): Promise<T> {
  const { target, budget, logger, signal } = options;
  for (let attempt = 1; ; attempt += 1) {
    let done: { value: T } | undefined;
    let reason = '';
    try {
      done = { value: await step() };
    } catch (error) {
      if (!passing(error)) throw error;
      reason = describeError(error);
    }
    if (signal?.aborted) {
      if (done) await release(done.value);
      signal.throwIfAborted();
    }
    if (done) return done.value;
    options.onFailure(reason);
    const left = deadline - Date.now();
    if (budget !== undefined && left <= 0)
      throw new Error(
        `storage ${target} not reachable within ${budget.seconds} s (${budget.setting}): ${reason}`,
      );
    const retryInMs = Math.min(retryDelayMs(attempt), left);
    logger.warn('storage not reachable; retrying', { storage: target, error: reason, attempt, retryInMs });
    await sleep(retryInMs, undefined, signal ? { signal } : {});
  }
}

/**
 * Opens storage, trying again with back-off until it answers, the budget runs out (an error that
 * names the budget's setting), the signal stops the wait or a {@link StorageSettingError} says that
 * waiting will not help. Each failed try is logged at warn
 * with the pause before the next; the budget is checked between tries.
 */
export function waitForStorage(
  open: (signal: AbortSignal) => Promise<OpenedStorage>,
  options: StorageWaitOptions,
  deadline = storageDeadline(options),
): Promise<OpenedStorage> {
  return retrying(
    () => tryToOpen(open, deadline, options.target),
    (error) => !(error instanceof StorageSettingError),
    deadline,
    options,
    (opened) => opened.close(),
  );
}

/**
 * Runs a step of the start on storage that answered (loading the seed), trying it again as
 * {@link waitForStorage} opens the storage while the storage is unavailable (a connection lost
 * meanwhile), until the same `deadline`; a step that fails otherwise fails the start.
 */
export function whileStorageWaits<T>(
  step: () => Promise<T>,
  options: StorageWaitOptions,
  deadline: number,
): Promise<T> {
  return retrying(
    step,
    (error) => isNotifyError(error, 'unavailable'),
    deadline,
    options,
    async () => undefined,
  );
}

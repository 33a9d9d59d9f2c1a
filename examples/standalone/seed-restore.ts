import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../core/index.js';
import { retryDelayMs } from './storage-wait.js';

/** Loads the seed again when the storage came back without it. */
export interface SeedRestore {
  /** A lost connection to the storage is back: its server may have restarted and kept nothing. */
  restored(): void;
  /** The service stops: no load starts or tries again from now on. */
  stop(): void;
}

/** What a {@link SeedRestore} checks and loads. */
export interface SeedRestoreOptions {
  /** Whether the storage still holds the seed (its first organization). */
  present(): Promise<boolean>;
  /** Loads the seed, as at start-up (it is idempotent). */
  load(): Promise<void>;
  logger: Logger;
}

/**
 * A Redis server that keeps nothing on disk comes back from a restart empty: the seeded
 * organizations, users and keys are gone, and every key would answer 401 until the service
 * restarted. Each time a lost connection is back the storage is asked whether it still holds the
 * seed, and only when it does not is the seed loaded again (password hashes are slow to make),
 * tried again with back-off until it is or the service stops. One restore runs at a time.
 */
export function seedRestore({ present, load, logger }: SeedRestoreOptions): SeedRestore {
  let stopped = false;
  let running = false;
  const restore = async (): Promise<void> => {
    for (let attempt = 1; !stopped; attempt += 1) {
      try {
        if (await present()) return;
        if (stopped) return;
        await load();
        logger.info('seed loaded again: the storage came back without it');
        return;
      } catch (error) {
        const retryInMs = retryDelayMs(attempt);
        logger.error('seed could not be loaded again; retrying', { error: String(error), retryInMs });
        await sleep(retryInMs);
      }
    }
  };
  return {
    restored() {
      if (running || stopped) return;
      running = true;
      void restore().finally(() => {
        running = false;
      });
    },
    stop() {
      stopped = true;
    },
  };
}

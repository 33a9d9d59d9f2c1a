import type { Logger } from '../../core/index.js';

/** Options of {@link stopOnSignals}. */
export interface ShutdownOptions {
  logger: Logger;
  /** Longest a clean stop may take before the process exits anyway, with code 1. */
  timeoutMs: number;
  /** Stops the service cleanly. */
  stop(): Promise<void>;
}

/**
 * A signal this soon after the first is the same request delivered twice: Ctrl-C in a terminal
 * reaches both npm and the service, and npm passes it on again.
 */
const echoMs = 1_000;

/**
 * On SIGTERM or SIGINT: stops the service and exits 0. The process exits with code 1 when the stop
 * fails, takes longer than `timeoutMs`, or a second signal comes (a second or more after the first).
 */
export function stopOnSignals({ logger, timeoutMs, stop }: ShutdownOptions): void {
  let firstAt: number | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (firstAt !== undefined) {
      if (Date.now() - firstAt < echoMs) return;
      logger.warn('second signal; exiting now', { signal });
      process.exit(1);
    }
    firstAt = Date.now();
    logger.info('stopping', { signal, timeoutMs });
    setTimeout(() => {
      logger.error(`could not stop within ${timeoutMs} ms (NOTIFY_SHUTDOWN_TIMEOUT_MS); exiting`);
      process.exit(1);
    }, timeoutMs);
    stop().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error('could not stop cleanly', { error: String(error) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

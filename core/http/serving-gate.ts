import { errorResponse } from './responses.js';
import type { HttpResponse } from './types.js';

/** What a request that arrives once the gate is closed is answered. */
export const shuttingDownResponse = (): HttpResponse =>
  errorResponse(503, 'The service is shutting down', { 'retry-after': '1' });

/**
 * Counts the requests a handler is serving, so that `Notifier.stop` can wait for them, and refuses
 * those that arrive once it is closed: a send accepted then could not finish its work.
 */
export class ServingGate {
  #serving = 0;
  #closed = false;
  readonly #idle: (() => void)[] = [];

  /** Counts a request in, or answers false once the gate is closed. */
  enter(): boolean {
    if (this.#closed) return false;
    this.#serving += 1;
    return true;
  }

  /** Counts a request out, once it is answered. */
  leave(): void {
    this.#serving -= 1;
    if (this.#serving === 0) for (const resolve of this.#idle.splice(0)) resolve();
  }

  /** Refuses every request from now on, and resolves once those being served are answered. */
  close(): Promise<void> {
    this.#closed = true;
    if (this.#serving === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }
}

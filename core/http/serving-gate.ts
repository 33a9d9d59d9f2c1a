import { BackgroundWork } from '../background-work.js';
import { errorResponse } from './responses.js';
import type { HttpResponse } from './types.js';

/**
 * What a request that arrives while the service stops is answered, by the core's routes and by a
 * transport's own: a send accepted then could not finish its work, nor a click be applied.
 */
export const shuttingDownResponse = (): HttpResponse =>
  errorResponse(503, 'The service is shutting down', { 'retry-after': '1' });

/**
 * Counts the requests a handler is serving, so that `Notifier.stop` can wait for them, and refuses
 * those that arrive once it is closed.
 */
export class ServingGate {
  readonly #serving = new BackgroundWork();
  #closed = false;

  /** Counts a request in and answers what counts it out once it is answered; null once closed. */
  enter(): (() => void) | null {
    return this.#closed ? null : this.#serving.begin();
  }

  /** Refuses every request from now on, and resolves once those being served are answered. */
  close(): Promise<void> {
    this.#closed = true;
    return this.#serving.idle();
  }
}

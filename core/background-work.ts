/**
 * Counts work in progress (the requests a handler is serving, in `ServingGate`), so that
 * `Notifier.stop` can wait for it before the storage it uses is closed.
 */
export class BackgroundWork {
  #running = 0;
  readonly #idle: (() => void)[] = [];

  /** Counts one piece of work in; call what it answers once that work settled, exactly once. */
  begin(): () => void {
    this.#running += 1;
    return () => {
      this.#running -= 1;
      if (this.#running === 0) for (const resolve of this.#idle.splice(0)) resolve();
    };
  }

  /** Resolves once no work is running. */
  idle(): Promise<void> {
    if (this.#running === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }
}

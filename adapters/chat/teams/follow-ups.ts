/**
 * Work a transport runs a little after answering a request (a click), outside it: started after a
 * delay, and, on `close`, started at once and awaited, so that none of it runs after the notifier
 * stopped. `work` must not throw.
 */
export class FollowUps {
  readonly #waiting = new Map<ReturnType<typeof setTimeout>, () => Promise<void>>();
  readonly #running = new Set<Promise<void>>();

  /** Starts `work` in `delayMs`. */
  after(delayMs: number, work: () => Promise<void>): void {
    const timer = setTimeout(() => {
      this.#waiting.delete(timer);
      this.#start(work);
    }, delayMs);
    timer.unref?.();
    this.#waiting.set(timer, work);
  }

  /** Starts what is still waiting at once, and resolves once every follow-up is done. */
  async close(): Promise<void> {
    for (const [timer, work] of this.#waiting) {
      clearTimeout(timer);
      this.#start(work);
    }
    this.#waiting.clear();
    await Promise.all(this.#running);
  }

  #start(work: () => Promise<void>): void {
    const running = work().finally(() => this.#running.delete(running));
    this.#running.add(running);
  }
}

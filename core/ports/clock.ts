/** The source of time. Injected so that tests can run in virtual time. */
export interface Clock {
  /** Epoch milliseconds. */
  now: () => number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

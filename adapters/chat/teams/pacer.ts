/** At most `limit` calls in any `windowMs` milliseconds. */
export interface PaceWindow {
  limit: number;
  windowMs: number;
}

/**
 * Teams' limits for one bot in one conversation
 * (https://learn.microsoft.com/microsoftteams/platform/bots/how-to/rate-limit): 7 sends a second,
 * 8 in two seconds, 60 in thirty seconds, 1,800 an hour.
 */
export const teamsConversationLimits: readonly PaceWindow[] = [
  { limit: 7, windowMs: 1000 },
  { limit: 8, windowMs: 2000 },
  { limit: 60, windowMs: 30_000 },
  { limit: 1800, windowMs: 3_600_000 },
];

/**
 * Teams' limit for one app in one tenant, across its conversations: about 30 calls a second
 * (docs/teams.md).
 */
export const teamsTenantLimits: readonly PaceWindow[] = [{ limit: 30, windowMs: 1000 }];

/** How a call waits its turn under a {@link Pacer}. */
export interface PaceOptions {
  /**
   * Whether the call goes before the calls of its key that are not (default true): a delivery, which
   * an HTTP answer waits on, before the updates of a mass expiry.
   */
  urgent?: boolean;
  /**
   * A turn of another pacer to wait for once the call is within this key's limits, before it is
   * counted under either: a conversation's call then a tenant's, counted together when it is made.
   */
  alsoWithin?: () => Promise<void>;
}

/** Keeps calls under a set of limits, per key (a conversation, a tenant). */
export interface Pacer {
  /** Waits until a call under `key` is within every limit, counts it, then runs `operation`. */
  run<T>(key: string, operation: () => Promise<T>, options?: PaceOptions): Promise<T>;
}

/** Time for a {@link Pacer}: real timers by default, virtual ones in tests. */
export interface PacerClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realPacerClock: PacerClock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** How many keys may pile up before the idle ones are swept away. */
const firstSweepAt = 1000;

/** How long a call that is not urgent waits before it looks again, while an urgent one of its key waits. */
const yieldMs = 5;

/**
 * A sliding-window pacer: each key keeps the start times of its recent calls, and a call waits until
 * it would be within every window's limit. Calls under one key start in the order they asked, the
 * urgent ones first; calls under different keys never wait for each other. It paces this process
 * only: instances that share a conversation can together exceed the limits, and the retries of `429`
 * absorb that.
 */
export function slidingWindowPacer(
  windows: readonly PaceWindow[] = teamsConversationLimits,
  clock: PacerClock = realPacerClock,
): Pacer {
  const longestMs = Math.max(0, ...windows.map((window) => window.windowMs));
  const keep = Math.max(0, ...windows.map((window) => window.limit));
  const starts = new Map<string, number[]>();
  /** The tail of each key's queue of urgent calls, and of its other calls. */
  const queues = { urgent: new Map<string, Promise<void>>(), later: new Map<string, Promise<void>>() };
  /** How many urgent calls of each key are waiting their turn. */
  const urgentWaiting = new Map<string, number>();
  // Doubles with the keys still in use after a sweep, so that sweeping stays linear overall.
  let sweepAt = firstSweepAt;

  /** Milliseconds until a call under these start times is within every limit (0: now). */
  const waitFor = (times: readonly number[], now: number): number =>
    Math.max(
      0,
      ...windows.map(({ limit, windowMs }) => {
        const oldestCounted = times[times.length - limit];
        return oldestCounted === undefined ? 0 : oldestCounted + windowMs - now;
      }),
    );

  const sweep = (now: number): void => {
    for (const [key, times] of starts) {
      const newest = times[times.length - 1];
      const queued = queues.urgent.has(key) || queues.later.has(key);
      if ((newest === undefined || newest + longestMs <= now) && !queued) starts.delete(key);
    }
    sweepAt = Math.max(firstSweepAt, 2 * starts.size);
  };

  const admit = async (key: string, urgent: boolean, alsoWithin: (() => Promise<void>) | undefined) => {
    let other = alsoWithin;
    for (;;) {
      const times = starts.get(key) ?? [];
      const wait = waitFor(times, clock.now());
      const pause = wait > 0 ? wait : !urgent && (urgentWaiting.get(key) ?? 0) > 0 ? yieldMs : 0;
      if (pause > 0) {
        await clock.sleep(pause);
        // The other pacer's turn, if given already, was counted then: once this key made the call
        // wait again (its urgent calls went meanwhile), that turn is asked for again, so that the
        // call is counted under both when it is made.
        other = alsoWithin;
      } else if (other !== undefined) {
        await other();
        other = undefined;
      } else {
        const now = clock.now();
        times.push(now);
        if (times.length > keep) times.splice(0, times.length - keep);
        starts.set(key, times);
        if (starts.size > sweepAt) sweep(now);
        return;
      }
    }
  };

  return {
    async run(key, operation, { urgent = true, alsoWithin } = {}) {
      const queue = urgent ? queues.urgent : queues.later;
      if (urgent) urgentWaiting.set(key, (urgentWaiting.get(key) ?? 0) + 1);
      const before = queue.get(key) ?? Promise.resolve();
      const turn = before.then(() => admit(key, urgent, alsoWithin));
      const tail = turn.catch(() => {});
      queue.set(key, tail);
      try {
        await turn;
      } finally {
        if (queue.get(key) === tail) queue.delete(key);
        if (urgent) {
          const left = (urgentWaiting.get(key) ?? 1) - 1;
          if (left > 0) urgentWaiting.set(key, left);
          else urgentWaiting.delete(key);
        }
      }
      return operation();
    },
  };
}

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
 * (docs/teams.md, `/work/shared/research/chat-platforms.md`).
 */
export const teamsTenantLimits: readonly PaceWindow[] = [{ limit: 30, windowMs: 1000 }];

/** Keeps calls under a set of limits, per key (a conversation, a tenant). */
export interface Pacer {
  /** Waits until a call under `key` is within every limit, counts it, then runs `operation`. */
  run<T>(key: string, operation: () => Promise<T>): Promise<T>;
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

/**
 * A sliding-window pacer: each key keeps the start times of its recent calls, and a call waits until
 * it would be within every window's limit. Calls under one key start in the order they asked;
 * calls under different keys never wait for each other. It paces this process only: instances that
 * share a conversation can together exceed the limits, and the retries of `429` absorb that.
 */
export function slidingWindowPacer(
  windows: readonly PaceWindow[] = teamsConversationLimits,
  clock: PacerClock = realPacerClock,
): Pacer {
  const longestMs = Math.max(0, ...windows.map((window) => window.windowMs));
  const keep = Math.max(0, ...windows.map((window) => window.limit));
  const starts = new Map<string, number[]>();
  const queues = new Map<string, Promise<void>>();
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
      if ((newest === undefined || newest + longestMs <= now) && !queues.has(key)) starts.delete(key);
    }
    sweepAt = Math.max(firstSweepAt, 2 * starts.size);
  };

  const admit = async (key: string): Promise<void> => {
    for (;;) {
      const now = clock.now();
      const times = starts.get(key) ?? [];
      const wait = waitFor(times, now);
      if (wait <= 0) {
        times.push(now);
        if (times.length > keep) times.splice(0, times.length - keep);
        starts.set(key, times);
        if (starts.size > sweepAt) sweep(now);
        return;
      }
      await clock.sleep(wait);
    }
  };

  return {
    async run(key, operation) {
      const before = queues.get(key) ?? Promise.resolve();
      const turn = before.then(() => admit(key));
      const tail = turn.catch(() => {});
      queues.set(key, tail);
      try {
        await turn;
      } finally {
        if (queues.get(key) === tail) queues.delete(key);
      }
      return operation();
    },
  };
}

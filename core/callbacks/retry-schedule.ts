const second = 1000;
const minute = 60 * second;
const hour = 60 * minute;

/** Pauses after each failed attempt (docs/behaviour.md#completion-callbacks): after the eighth failure the delivery has failed. */
export const retryDelaysMs = [
  5 * second,
  5 * minute,
  30 * minute,
  2 * hour,
  5 * hour,
  10 * hour,
  10 * hour,
] as const;

/** The longest pause of the schedule: a receiver's `Retry-After` is capped at it. */
export const longestRetryDelayMs = Math.max(...retryDelaysMs);

/**
 * When to try again after failed attempt number `attempt` (0 for the first), or null when no
 * attempt is left. ±20 % jitter spreads receivers' recoveries; a receiver's `Retry-After` may only
 * lengthen the pause, and by no more than the longest step, so that a huge one still yields a
 * valid date and the attempt is counted. `random` is a number in [0, 1).
 */
export function nextRetryDelay(attempt: number, retryAfterMs: number | null, random: number): number | null {
  const base = retryDelaysMs[attempt];
  if (base === undefined) return null;
  const jittered = Math.round(base * (0.8 + 0.4 * random));
  // `> 0` also drops NaN; Infinity is capped like any other excess.
  const asked = retryAfterMs !== null && retryAfterMs > 0 ? Math.min(retryAfterMs, longestRetryDelayMs) : 0;
  return Math.max(jittered, asked);
}

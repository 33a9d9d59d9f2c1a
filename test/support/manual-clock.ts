import type { Clock } from '../../core/ports/clock.js';

/** A clock that moves only when told: virtual time for rate limits, expiry and timeouts. */
export interface ManualClock extends Clock {
  advance(ms: number): void;
  set(epochMs: number): void;
}

/** A manual clock starting at `start` (default 2026-01-01T00:00:00.000Z). */
export function manualClock(start = Date.parse('2026-01-01T00:00:00.000Z')): ManualClock {
  let now = start;
  return {
    now: () => now,
    advance(ms) {
      now += ms;
    },
    set(epochMs) {
      now = epochMs;
    },
  };
}

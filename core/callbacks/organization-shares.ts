/**
 * How many callback attempts of each organization run at once in this process, at most `limit` each:
 * receivers of one organization that never answer (15 s an attempt) would otherwise take every
 * due-work slot, and every other organization's callbacks, and the timeouts behind them, would wait.
 */
export interface OrganizationShares {
  /**
   * Takes a share for `organizationId` at `now` (ms): 0 when taken, else how long to put the attempt
   * off: a second or two while the organization's attempts end and free their shares, longer (up to
   * half a minute) the longer none has ended, so that the backlog of receivers that never answer
   * does not go round through the store every second or two.
   */
  take(organizationId: string, now: number): number;
  /** Gives back a share taken. */
  give(organizationId: string): void;
}

/** The shortest put-off, before its jitter: about as long as an attempt to a receiver that answers. */
const shortestPutOffMs = 1_000;
/** The longest put-off, jitter included. */
const longestPutOffMs = 30_000;

/** Creates {@link OrganizationShares} of `limit` each; `random` in [0, 1) spreads the put-off attempts. */
export function organizationShares(limit: number, random: () => number = Math.random): OrganizationShares {
  const inUse = new Map<string, number>();
  /** Since when each organization has had every share in use without one given back. */
  const fullSince = new Map<string, number>();
  return {
    take(organizationId, now) {
      const used = inUse.get(organizationId) ?? 0;
      if (used < limit) {
        inUse.set(organizationId, used + 1);
        return 0;
      }
      const since = fullSince.get(organizationId) ?? now;
      fullSince.set(organizationId, since);
      const base = Math.max(shortestPutOffMs, now - since);
      return Math.min(longestPutOffMs, Math.round(base * (1 + random())));
    },
    give(organizationId) {
      fullSince.delete(organizationId);
      const used = (inUse.get(organizationId) ?? 1) - 1;
      if (used > 0) inUse.set(organizationId, used);
      else inUse.delete(organizationId);
    },
  };
}

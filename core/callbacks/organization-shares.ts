/**
 * How many callback attempts of each organization run at once in this process, at most `limit` each:
 * receivers of one organization that never answer (15 s an attempt) would otherwise take every
 * due-work slot, and every other organization's callbacks, and the timeouts behind them, would wait.
 */
export interface OrganizationShares {
  /**
   * Takes a share for `organizationId` at `now` (ms): 0 when taken, else how long to put the attempt
   * off, longer the more of the organization's attempts were put off lately: a second or two for a
   * few, up to half a minute for a backlog of thousands, whose attempts would otherwise go round
   * through the store every second or two.
   */
  take(organizationId: string, now: number): number;
  /** Gives back a share taken. */
  give(organizationId: string): void;
}

/** The window over which attempts put off are counted. */
const windowMs = 1_000;
/** The longest an attempt is put off, before its jitter. */
const longestPutOffMs = 30_000;

/** Creates {@link OrganizationShares} of `limit` each; `random` in [0, 1) spreads the put-off attempts. */
export function organizationShares(limit: number, random: () => number = Math.random): OrganizationShares {
  const inUse = new Map<string, number>();
  /** Attempts put off per organization in its current window. */
  const putOff = new Map<string, { since: number; count: number }>();
  return {
    take(organizationId, now) {
      const used = inUse.get(organizationId) ?? 0;
      if (used < limit) {
        inUse.set(organizationId, used + 1);
        return 0;
      }
      let window = putOff.get(organizationId);
      if (window === undefined || now - window.since >= windowMs) {
        window = { since: now, count: 0 };
        putOff.set(organizationId, window);
      }
      window.count += 1;
      const delay = Math.min(longestPutOffMs, Math.max(windowMs, (window.count / limit) * windowMs));
      return Math.round(delay * (1 + random()));
    },
    give(organizationId) {
      const used = (inUse.get(organizationId) ?? 1) - 1;
      if (used > 0) inUse.set(organizationId, used);
      else {
        inUse.delete(organizationId);
        putOff.delete(organizationId);
      }
    },
  };
}

/**
 * How many callback attempts of each organization run at once in this process, at most `limit` each:
 * receivers of one organization that never answer (15 s an attempt) would otherwise take every
 * due-work slot, and every other organization's callbacks, and the timeouts behind them, would wait.
 */
export interface OrganizationShares {
  /** Takes a share for `organizationId`: false when it has `limit` in use. */
  take(organizationId: string): boolean;
  /** Gives back a share taken. */
  give(organizationId: string): void;
}

/** Creates {@link OrganizationShares} of `limit` each. */
export function organizationShares(limit: number): OrganizationShares {
  const inUse = new Map<string, number>();
  return {
    take(organizationId) {
      const used = inUse.get(organizationId) ?? 0;
      if (used >= limit) return false;
      inUse.set(organizationId, used + 1);
      return true;
    },
    give(organizationId) {
      const used = (inUse.get(organizationId) ?? 1) - 1;
      if (used > 0) inUse.set(organizationId, used);
      else inUse.delete(organizationId);
    },
  };
}

/** A limit as the specification states it: a burst, refilled at a sustained rate. */
export interface RateLimit {
  /** Requests allowed at once (the bucket's capacity). */
  burst: number;
  /** Requests per second sustained (the refill rate). */
  perSecond: number;
}

/** The limits of a deployment (docs/behaviour.md#rate-limits). */
export interface RateLimitSettings {
  /** Per API key; default 10 burst, 2 per second. */
  perKey: RateLimit;
  /** Per organization; default 50 burst, 5 per second. */
  perOrganization: RateLimit;
  /** Failed authentications per client address; default 20 burst, 1 per second. */
  failedAuthentication: RateLimit;
  /**
   * API keys a user creates (`notifier.apiKeys.create`, the account pages); default 10 burst, 10 an
   * hour. Revoked keys stay listed, so this bounds how fast one user can grow every admin's list.
   */
  keyCreation: RateLimit;
}

/** The specification's limits. */
export const defaultRateLimits: RateLimitSettings = {
  perKey: { burst: 10, perSecond: 2 },
  perOrganization: { burst: 50, perSecond: 5 },
  failedAuthentication: { burst: 20, perSecond: 1 },
  keyCreation: { burst: 10, perSecond: 10 / 3600 },
};

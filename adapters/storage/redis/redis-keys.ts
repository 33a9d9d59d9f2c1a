/**
 * The key layout under one prefix. Fixed keys have no `:` after the prefix and every keyed family is
 * `<family>:<id>` with a family name that is never the start of another, so no two records can share
 * a key whatever characters ids contain. Families that scripts extend themselves (they learn the id
 * from stored data) are also given as bases for the scripts to append to.
 */
export interface RedisKeys {
  /** The prefix itself, e.g. `chat-notify:`. */
  prefix: string;
  /** Counter behind the insertion order of users, API keys, due items and failed callbacks. */
  sequence: string;
  /** Hash: organization id → JSON. */
  organizations: string;
  /** Hash: user id → JSON of the user without its id (the field is the id). */
  users: string;
  /** Hash: user id → organization id, to leave the old organization's set when it changes. */
  userOrganization: string;
  /** Hash: user id → its field in {@link RedisKeys.usersByEmail}. */
  userEmailField: string;
  /** Hash: JSON `[organizationId, normalizedEmail]` → user id. */
  usersByEmail: string;
  /** Sorted set of every user id by the sequence of its first save (the memory adapter's order). */
  userOrder: string;
  /** Sorted set of the user ids of an organization, scored as in {@link RedisKeys.userOrder}. */
  organizationUsers(organizationId: string): string;
  organizationUsersBase: string;
  /** Hash: key id → JSON of the key as saved. */
  apiKeys: string;
  /** Hash: key id → `lastUsedAt` (epoch ms), overriding the saved value. */
  apiKeyLastUsed: string;
  /** Hash: key id → `revokedAt` (epoch ms), overriding the saved value. */
  apiKeyRevoked: string;
  /** Hash: digest → key id. */
  apiKeyDigests: string;
  /** Hash: key id → its member in the listing sorted sets (`<16-digit sequence>:<id>`). */
  apiKeyMember: string;
  /** Sorted set of an organization's keys by `createdAt`. */
  organizationKeys(organizationId: string): string;
  organizationKeysBase: string;
  /** Sorted set of a user's keys by `createdAt` (of every organization; listings filter). */
  userKeys(userId: string): string;
  userKeysBase: string;
  /**
   * String `<version>:<JSON>` of one interactive request, then a line `\n<JSON>` for each copy of it
   * delivered: a copy to one of the request's recipients names it by its index, any other copy its
   * address (`delivery-lua.ts`). A hash `{version, json}`, its copies in
   * {@link RedisKeys.deliveries}, in earlier releases.
   */
  request(id: string): string;
  /**
   * Sorted set of due items, scored by when each becomes claimable (runAt or lease end): an item with
   * a record as a `<sequence>:<id>` member (a new sequence on each scheduling, so ties keep
   * scheduling order), an unclaimed first attempt whose id is `<kind>:<requestId>` as its id alone
   * (ties after those, in the order of their ids).
   */
  due: string;
  /**
   * Base of the records of due items: hashes `{kind, requestId, runAt, attempt, member, lease}`; none
   * for an unclaimed first attempt whose id is `<kind>:<requestId>` (a string, its member, in the
   * release before).
   */
  dueItemBase: string;
  /**
   * Hash: JSON `[recipient, platform]` → JSON `[place, ref, deliveredAt]` of a copy, of one send that
   * has no request (a plain send) or whose copies an earlier release began to keep here.
   */
  deliveries(sendId: string): string;
  /**
   * List of the fields of {@link RedisKeys.deliveries} in recording order, of the sends of earlier
   * releases (whose copies were whole records without a place).
   */
  deliveryOrder(sendId: string): string;
  /** Hash of one idempotency record, expiring with it: the base, then JSON `[organizationId, key]`. */
  idempotency(organizationId: string, key: string): string;
  /** Base of {@link RedisKeys.idempotency}, for the admission script that builds it. */
  idempotencyBase: string;
  /** Hash `{tokens, updatedAt}` of one token bucket, expiring once it would be full again. */
  rateLimit(key: string): string;
  /**
   * String `<version>:<value>` of one transport-state record (a hash `{value, version}` in earlier
   * releases), expiring with it.
   */
  transportRecord(key: string): string;
  /** List of the entries of one transport-state list, expiring with it. */
  transportList(key: string): string;
  /** Hash: request id → JSON failure. */
  failedCallbacks: string;
  /** Sorted set of request ids by the sequence of their latest failure. */
  failedCallbackOrder: string;
  /** Sorted set of the request ids of failures that expire, by when (server-clock milliseconds). */
  failedCallbackExpiry: string;
}

/** The keys of one deployment (or one test) under `prefix`. */
export function redisKeys(prefix: string): RedisKeys {
  const base = (family: string): string => `${prefix}${family}:`;
  return {
    prefix,
    sequence: `${prefix}sequence`,
    organizations: `${prefix}organizations`,
    users: `${prefix}users`,
    userOrganization: `${prefix}user-organization`,
    userEmailField: `${prefix}user-email-field`,
    usersByEmail: `${prefix}users-by-email`,
    userOrder: `${prefix}user-order`,
    organizationUsers: (id) => `${base('organization-users')}${id}`,
    organizationUsersBase: base('organization-users'),
    apiKeys: `${prefix}api-keys`,
    apiKeyLastUsed: `${prefix}api-key-last-used`,
    apiKeyRevoked: `${prefix}api-key-revoked`,
    apiKeyDigests: `${prefix}api-key-digests`,
    apiKeyMember: `${prefix}api-key-member`,
    organizationKeys: (id) => `${base('organization-keys')}${id}`,
    organizationKeysBase: base('organization-keys'),
    userKeys: (id) => `${base('user-keys')}${id}`,
    userKeysBase: base('user-keys'),
    request: (id) => `${base('request')}${id}`,
    due: `${prefix}due`,
    dueItemBase: base('due-item'),
    deliveries: (sendId) => `${base('deliveries')}${sendId}`,
    deliveryOrder: (sendId) => `${base('delivery-order')}${sendId}`,
    idempotency: (organizationId, key) => `${base('idempotency')}${JSON.stringify([organizationId, key])}`,
    idempotencyBase: base('idempotency'),
    rateLimit: (key) => `${base('rate-limit')}${key}`,
    transportRecord: (key) => `${base('transport-record')}${key}`,
    transportList: (key) => `${base('transport-list')}${key}`,
    failedCallbacks: `${prefix}failed-callbacks`,
    failedCallbackOrder: `${prefix}failed-callback-order`,
    failedCallbackExpiry: `${prefix}failed-callback-expiry`,
  };
}

/** A value, or a promise of it: resolvers may look things up in a database. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * Which Microsoft Entra tenant each organization uses Teams in. One transport serves every
 * organization: their users are reached in their own tenant, and an activity from a tenant that no
 * organization names is refused. Called on every delivery and every activity, so that tenants can
 * change at any time; cache in it if looking one up is slow.
 */
export interface TeamsTenants {
  /** The tenant id (a GUID) of the organization, or null when it does not use Teams. */
  tenantOf(organizationId: string): MaybePromise<string | null>;
  /**
   * Whether some organization names this tenant: activities from any other tenant are refused. The
   * id comes in lower case (Microsoft writes GUIDs in either case): compare it ignoring case.
   */
  serves(tenantId: string): MaybePromise<boolean>;
}

/** Tenant ids are GUIDs, which Microsoft writes in either case. */
export const normalizeTenantId = (tenantId: string): string => tenantId.trim().toLowerCase();

/**
 * Fixed tenants: `{ acme: '72f988bf-…' }` (organization id to tenant id), as the standalone host
 * reads them from its seed.
 */
export function fixedTeamsTenants(byOrganization: Readonly<Record<string, string>>): TeamsTenants {
  const tenants = new Map(
    Object.entries(byOrganization).map(([id, tenant]) => [id, normalizeTenantId(tenant)]),
  );
  const served = new Set(tenants.values());
  return {
    tenantOf: (organizationId) => tenants.get(organizationId) ?? null,
    serves: (tenantId) => served.has(normalizeTenantId(tenantId)),
  };
}

import type { ApiKeyView, CreatedApiKey } from '../core/index.js';
import type { AccountUser } from './account-user.js';
import type { AuditEntry } from './audit-log.js';
import type { PagesContext } from './routes/route-kit.js';

/** Whose keys an operation reaches: the user's own, or (admins) every key of the organization. */
export type KeyScope = 'own' | 'organization';

const actorOf = (user: AccountUser, scope: KeyScope) => ({
  userId: user.userId,
  admin: scope === 'organization',
});

async function record(
  context: PagesContext,
  user: AccountUser,
  action: AuditEntry['action'],
  key: ApiKeyView,
  clientAddress: string,
): Promise<void> {
  const entry: AuditEntry = {
    at: new Date(context.clock.now()).toISOString(),
    action,
    actor: { userId: user.userId, name: user.name ?? null, email: user.email ?? null },
    key: { id: key.id, prefix: key.prefix, label: key.label, owner: key.owner },
    clientAddress,
  };
  try {
    await context.audit.record(user.organizationId, entry);
  } catch (error) {
    // The key operation itself succeeded: the log keeps the entry, and the person keeps their key.
    context.logger.error('could not record an API key operation in the audit record', {
      entry,
      error: String(error),
    });
  }
}

/** Keys the user may see in a scope, optionally filtered (label, prefix, owner name or email). */
export function listKeys(
  context: PagesContext,
  user: AccountUser,
  scope: KeyScope,
  search?: string,
): Promise<ApiKeyView[]> {
  return context.keys.list(actorOf(user, scope), { scope, ...(search ? { search } : {}) });
}

/** A key of the scope by id, or null when the user may not reach it (another user's, another organization's). */
export async function findKey(
  context: PagesContext,
  user: AccountUser,
  scope: KeyScope,
  keyId: string,
): Promise<ApiKeyView | null> {
  return (await listKeys(context, user, scope)).find((key) => key.id === keyId) ?? null;
}

/** Creates a personal key and records it. */
export async function createKey(
  context: PagesContext,
  user: AccountUser,
  label: string,
  clientAddress: string,
): Promise<CreatedApiKey> {
  const created = await context.keys.create(actorOf(user, 'own'), label);
  await record(context, user, 'create', created.key, clientAddress);
  return created;
}

/** Revokes a key found with {@link findKey} and records it; a key already revoked stays as it is. */
export async function revokeKey(
  context: PagesContext,
  user: AccountUser,
  scope: KeyScope,
  key: ApiKeyView,
  clientAddress: string,
): Promise<void> {
  if (key.revokedAt !== null) return;
  // Recorded by the one call that revoked it: several racing (the owner and an admin, a double
  // submit on two instances) would otherwise each append a revocation.
  if (await context.keys.revoke(actorOf(user, scope), key.id)) {
    await record(context, user, 'revoke', key, clientAddress);
  }
}

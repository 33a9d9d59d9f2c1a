import type { ApiKeyView, FailedCallback } from '../core/index.js';
import type { AuditEntry } from './audit-log.js';

/** A key as the JSON API shows it, in the field style of the notification API. */
export const keyJson = (key: ApiKeyView) => ({
  id: key.id,
  label: key.label,
  prefix: key.prefix,
  created_at: key.createdAt,
  last_used_at: key.lastUsedAt,
  revoked_at: key.revokedAt,
  owner: { name: key.owner.name, email: key.owner.email },
});

/** An audit entry as the JSON API shows it. */
export const auditJson = (entry: AuditEntry) => ({
  at: entry.at,
  action: entry.action,
  actor: { user_id: entry.actor.userId, name: entry.actor.name, email: entry.actor.email },
  key: entry.key,
  client_address: entry.clientAddress,
});

/** A failed callback as the admin API shows it. */
export const failedCallbackJson = (failure: FailedCallback) => ({
  request_id: failure.requestId,
  url: failure.url,
  attempts: failure.attempts,
  last_status: failure.lastStatus,
  last_error: failure.lastError,
  failed_at: new Date(failure.failedAt).toISOString(),
});

import type { TransportStateStore } from '../core/adapter-kit.js';
import type { ApiKeyView, Clock } from '../core/index.js';

/** One recorded creation or revocation of an API key. */
export interface AuditEntry {
  /** ISO 8601. */
  at: string;
  action: 'create' | 'revoke';
  /** Who did it; name and email when the embedding application gave them. */
  actor: { userId: string; name: string | null; email: string | null };
  /** Which key: never the plaintext. */
  key: Pick<ApiKeyView, 'id' | 'prefix' | 'label' | 'owner'>;
  /** The client's address, as the trusted proxies report it. */
  clientAddress: string;
}

/** The record of an organization's key operations, kept in storage so that every instance shares it. */
export interface AuditLog {
  /** Appends an entry to the record of `organizationId`. */
  record(organizationId: string, entry: AuditEntry): Promise<void>;
  /** The entries of the retention period, newest first, at most `limit`. */
  recent(organizationId: string, limit: number): Promise<AuditEntry[]>;
}

const monthOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);

/** The months (`YYYY-MM`, UTC) from the one of `to` back to the one of `from`. */
function monthsBetween(from: number, to: number): string[] {
  const first = monthOf(from);
  const cursor = new Date(to);
  // The first of the month, so that stepping back never overflows (31 March less a month is not 3 March).
  cursor.setUTCDate(1);
  const months: string[] = [];
  while (monthOf(cursor.getTime()) >= first) {
    months.push(monthOf(cursor.getTime()));
    cursor.setUTCMonth(cursor.getUTCMonth() - 1);
  }
  return months;
}

/**
 * The audit record over a transport-state view: one append-only list per organization and month
 * (`audit:<organization>:<YYYY-MM>`), so that a read costs one round trip per month of the retention
 * period, and each list expires `retentionMs` after its last entry, so nothing is kept much longer.
 */
export function auditLog(state: TransportStateStore, clock: Clock, retentionMs: number): AuditLog {
  const listKey = (organizationId: string, month: string) =>
    `audit:${encodeURIComponent(organizationId)}:${month}`;
  return {
    async record(organizationId, entry) {
      await state.append(listKey(organizationId, monthOf(Date.parse(entry.at))), JSON.stringify(entry), {
        ttlMs: retentionMs,
      });
    },
    async recent(organizationId, limit) {
      const now = clock.now();
      const since = now - retentionMs;
      const months = monthsBetween(since, now);
      const lists = await Promise.all(months.map((month) => state.readList(listKey(organizationId, month))));
      // Newest first, and among entries of one millisecond the later appended first.
      return lists
        .flatMap((list) => [...list].reverse())
        .map((text) => JSON.parse(text) as AuditEntry)
        .filter((entry) => Date.parse(entry.at) >= since)
        .sort((a, b) => b.at.localeCompare(a.at))
        .slice(0, limit);
    },
  };
}

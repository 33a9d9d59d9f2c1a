import type { CoreContext } from '../context.js';
import type { InteractiveRequest } from '../domain/interactive-request.js';
import type { DeliveryWriteOptions } from '../ports/delivery-store.js';
import type { FailedCallbackWriteOptions } from '../ports/failed-callback-store.js';

/** What the retention of a request's callback depends on. */
type RetentionContext = Pick<CoreContext, 'clock' | 'retentionMs'>;

/** The longest an attempt may come before its request's retention ends, as a share of it... */
const retentionMarginShare = 0.1;
/** ...and at most this long before (the due work may run late). */
const longestRetentionMarginMs = 60 * 60_000;

/** When a finished request is deleted, at the end of its retention (never, for one not finished). */
const deletedAt = (context: RetentionContext, request: InteractiveRequest): number =>
  request.finishedAt === null ? Number.POSITIVE_INFINITY : request.finishedAt + context.retentionMs;

/**
 * The latest time a next attempt of `request`'s callback may be scheduled for: some time before the
 * request is deleted at the end of its retention, so that a failure is kept (and listed, and can be
 * replayed) while the request is, whatever a receiver's `Retry-After` or a late replay asked.
 */
export function lastAttemptBefore(context: RetentionContext, request: InteractiveRequest): number {
  const margin = Math.min(context.retentionMs * retentionMarginShare, longestRetentionMarginMs);
  return deletedAt(context, request) - margin;
}

/**
 * How long what belongs to a finished `request` is kept (its callback's failure, a copy recorded
 * late): as long as the request, whose retention runs from its finish, and at least a moment. A
 * store that keeps the copies in the request's own record (Redis) would otherwise restart the
 * request's retention from the late write. Nothing for a request not finished.
 */
export function keptWithRequest(
  context: RetentionContext,
  request: InteractiveRequest,
): FailedCallbackWriteOptions & DeliveryWriteOptions {
  const left = deletedAt(context, request) - context.clock.now();
  return Number.isFinite(left) ? { ttlMs: Math.max(1, left) } : {};
}

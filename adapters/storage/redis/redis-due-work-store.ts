import type { ClaimedDueItem, DueWorkKind, DueWorkStore } from '../../../core/adapter-kit.js';
import { encodeDueChanges } from './due-changes.js';
import {
  applyDueScript,
  claimScript,
  completeScript,
  nextRunAtScript,
  rescheduleScript,
} from './lua/due-work-lua.js';
import type { RedisKeys } from './redis-keys.js';
import type { RedisRunner } from './redis-runner.js';
import { asOptionalNumber, asString, chunks } from './replies.js';

/**
 * Due work in a sorted set scored by when each item becomes claimable, with each item in a record of
 * its own (`dueLua`: a hash), except a request's timeout (or first callback) not yet claimed, which
 * is its member alone.
 * Claims, completions and reschedules are single scripts, so a lease is granted to one worker only
 * and a stale lease token changes nothing. The lowest score is the next time anything is claimable.
 */
export function redisDueWorkStore(redis: RedisRunner, keys: RedisKeys): DueWorkStore {
  return {
    async enqueue(items) {
      if (items.length === 0) return;
      await redis.evalScript(
        applyDueScript,
        [keys.due, keys.sequence],
        [keys.dueItemBase, ...encodeDueChanges({ cancel: [], enqueue: [...items] })],
      );
    },
    async cancel(ids) {
      if (ids.length === 0) return;
      await redis.evalScript(
        applyDueScript,
        [keys.due, keys.sequence],
        [keys.dueItemBase, ...encodeDueChanges({ cancel: [...ids], enqueue: [] })],
      );
    },
    async claim(now, limit, leaseMs) {
      if (limit <= 0) return [];
      const reply = await redis.evalScript(
        claimScript,
        [keys.due, keys.sequence],
        [keys.dueItemBase, String(now), String(limit), String(now + leaseMs)],
      );
      return chunks(reply, 6).map(
        ([id, kind, requestId, runAt, attempt, leaseToken]): ClaimedDueItem => ({
          id: asString(id),
          kind: asString(kind) as DueWorkKind,
          requestId: asString(requestId),
          runAt: Number(asString(runAt)),
          attempt: Number(asString(attempt)),
          leaseToken: asString(leaseToken),
        }),
      );
    },
    async complete(item) {
      await redis.evalScript(completeScript, [keys.due], [keys.dueItemBase, item.id, item.leaseToken]);
    },
    async reschedule(item, runAt, options) {
      await redis.evalScript(
        rescheduleScript,
        [keys.due, keys.sequence],
        [
          keys.dueItemBase,
          item.id,
          item.leaseToken,
          String(runAt),
          options?.sameAttempt === true ? '0' : '1',
        ],
      );
    },
    async nextRunAt() {
      return asOptionalNumber(await redis.evalScript(nextRunAtScript, [keys.due], []));
    },
  } satisfies DueWorkStore;
}

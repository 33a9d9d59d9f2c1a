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
  const completions = batchedCompletions((items) =>
    redis.evalScript(
      completeScript,
      [keys.due],
      [keys.dueItemBase, ...items.flatMap((item) => [item.id, item.leaseToken])],
    ),
  );
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
    complete: (item) => completions.complete(item),
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

/** Completions of claimed items, written together. */
interface BatchedCompletions {
  /** Resolves once the item is completed, with the others completed in the same turn of the event loop. */
  complete(item: ClaimedDueItem): Promise<void>;
}

/**
 * Gathers the completions asked for in one turn of the event loop into one script: a burst of
 * timeouts completes its items a socket read's worth of replies at a time, and one round trip for
 * them all saves a command apiece (about a seventh of an expiry's work on both sides). What fails
 * fails every completion of the batch: each item then runs again once its lease ends, as every
 * completion that fails does.
 */
function batchedCompletions(
  write: (items: readonly ClaimedDueItem[]) => Promise<unknown>,
): BatchedCompletions {
  let batch: { item: ClaimedDueItem; resolve: () => void; reject: (error: unknown) => void }[] = [];
  const flush = (): void => {
    const flushed = batch;
    batch = [];
    write(flushed.map((entry) => entry.item)).then(
      () => {
        for (const entry of flushed) entry.resolve();
      },
      (error: unknown) => {
        for (const entry of flushed) entry.reject(error);
      },
    );
  };
  return {
    complete(item) {
      return new Promise<void>((resolve, reject) => {
        batch.push({ item, resolve, reject });
        if (batch.length === 1) setImmediate(flush);
      });
    },
  };
}

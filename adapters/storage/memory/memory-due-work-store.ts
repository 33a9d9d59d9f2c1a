import type { ClaimedDueItem, DueItem, DueWorkChanges, DueWorkStore } from '../../../core/adapter-kit.js';
import { createMinHeap, type HeapPosition } from './min-heap.js';

/** The memory due-work store, plus the synchronous hook that lets the request store change due work in the same step as a write. */
export interface MemoryDueWorkStore extends DueWorkStore {
  /** Applies `changes` at once: cancels first, then enqueues, so an id in both ends up enqueued. */
  apply(changes: DueWorkChanges): void;
}

/**
 * An item, its lease and its place in the heap, in one object since every pending request keeps
 * one. `at` is when it can be claimed: its runAt, or the end of its lease while leased, when
 * `leasedRunAt` keeps its runAt (a time is a 16-byte box of its own: an item that is not leased keeps
 * one, not two). `order` breaks ties between equal times: first scheduled, first claimed. `at` is a
 * field of its own rather than `leaseEnd ?? runAt`: the heap compares it on every level it walks,
 * and V8 boxed the time merged from a field that may be null on every comparison (739 bytes per
 * expiry).
 */
interface Entry extends Omit<DueItem, 'runAt'>, HeapPosition {
  leaseToken: string | null;
  at: number;
  leasedRunAt: number | null;
  order: number;
}

/**
 * Due work in a min-heap of claimable times in which each item sits once: enqueueing, cancelling,
 * leasing or rescheduling one moves it or takes it out. A claim costs O(k log n) for k items, never
 * a scan of everything pending, and nothing stale is left behind to skip or compact.
 */
export function memoryDueWorkStore(): MemoryDueWorkStore {
  const entries = new Map<string, Entry>();
  const heap = createMinHeap<Entry>((a, b) => a.at < b.at || (a.at === b.at && a.order < b.order));
  let scheduled = 0;
  let leases = 0;

  /** Puts `entry`, whose `at` was just set, in its place: after every item of that time. */
  const schedule = (entry: Entry): void => {
    scheduled += 1;
    entry.order = scheduled;
    if (entry.heapIndex === -1) heap.push(entry);
    else heap.reorder(entry);
  };

  const remove = (id: string): void => {
    const entry = entries.get(id);
    if (entry === undefined) return;
    heap.remove(entry);
    entries.delete(id);
  };

  const enqueueOne = ({ id, kind, requestId, runAt, attempt }: DueItem): void => {
    remove(id);
    const entry: Entry = {
      id,
      kind,
      requestId,
      attempt,
      leaseToken: null,
      at: runAt,
      leasedRunAt: null,
      order: 0,
      heapIndex: -1,
    };
    entries.set(id, entry);
    schedule(entry);
  };

  /** The entry when `claimed` still holds its lease token; a lost lease reads as absent. */
  const owned = (claimed: ClaimedDueItem): Entry | undefined => {
    const entry = entries.get(claimed.id);
    return entry !== undefined && entry.leaseToken === claimed.leaseToken ? entry : undefined;
  };

  return {
    apply(changes) {
      for (const id of changes.cancel) remove(id);
      for (const item of changes.enqueue) enqueueOne(item);
    },
    async enqueue(items) {
      for (const item of items) enqueueOne(item);
    },
    async cancel(ids) {
      for (const id of ids) remove(id);
    },
    async claim(now, limit, leaseMs) {
      const claimed: ClaimedDueItem[] = [];
      const leased: Entry[] = [];
      for (let top = heap.peek(); top !== undefined && claimed.length < limit; top = heap.peek()) {
        if (top.at > now) break;
        heap.remove(top);
        leases += 1;
        const leaseToken = `lease_${leases}`;
        top.leaseToken = leaseToken;
        // An item whose lease ran out is claimed again with the runAt of its first claim.
        const runAt = top.leasedRunAt ?? top.at;
        top.leasedRunAt = runAt;
        leased.push(top);
        // Exactly the fields of a due item, in one fresh object: nothing of the entry leaks out.
        const { id, kind, requestId, attempt } = top;
        claimed.push({ id, kind, requestId, runAt, attempt, leaseToken });
      }
      // Back in the heap only after the loop: with leaseMs 0 the lease ends at `now`, and the same
      // item must not come out twice in one claim.
      for (const entry of leased) {
        entry.at = now + leaseMs;
        schedule(entry);
      }
      return claimed;
    },
    async complete(item) {
      if (owned(item) !== undefined) remove(item.id);
    },
    async reschedule(item, runAt, options) {
      const entry = owned(item);
      if (entry === undefined) return;
      if (options?.sameAttempt !== true) entry.attempt += 1;
      entry.leaseToken = null;
      entry.at = runAt;
      entry.leasedRunAt = null;
      schedule(entry);
    },
    async nextRunAt() {
      const top = heap.peek();
      return top === undefined ? null : top.at;
    },
  } satisfies MemoryDueWorkStore;
}

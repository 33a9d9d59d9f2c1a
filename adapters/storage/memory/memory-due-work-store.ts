import type { ClaimedDueItem, DueItem, DueWorkChanges, DueWorkStore } from '../../../core/adapter-kit.js';
import { createMinHeap } from './min-heap.js';

/** The memory due-work store, plus the synchronous hook that lets the request store change due work in the same step as a write. */
export interface MemoryDueWorkStore extends DueWorkStore {
  /** Applies `changes` at once: cancels first, then enqueues, so an id in both ends up enqueued. */
  apply(changes: DueWorkChanges): void;
}

/**
 * An item and its lease, in one object since every pending request keeps one. `generation` names
 * the one heap slot that is current for it; 0 once the item is gone (completed, cancelled or
 * replaced), which makes every slot of it stale.
 */
interface Entry extends DueItem {
  leaseToken: string | null;
  generation: number;
}

/** When an item becomes claimable: its runAt, or the end of its lease. */
interface Slot {
  at: number;
  entry: Entry;
  generation: number;
}

/** Heap slots left behind by cancels and replacements are dropped once they outnumber live items this much. */
const compactionSlack = 1024;

/** Copies exactly the fields of a due item: a fresh object, and no `leaseToken` of a claimed item passed back in. */
const copyItem = ({ id, kind, requestId, runAt, attempt }: DueItem): DueItem => ({
  id,
  kind,
  requestId,
  runAt,
  attempt,
});

/**
 * Due work in a min-heap of claimable times. Each item has exactly one current slot; replacing,
 * cancelling, leasing or rescheduling it makes the old slot stale (lazy deletion), so a claim costs
 * O(k log n) for k items plus the stale slots it skips, never a scan of everything pending.
 */
export function memoryDueWorkStore(): MemoryDueWorkStore {
  const entries = new Map<string, Entry>();
  const heap = createMinHeap<Slot>((a, b) => a.at < b.at || (a.at === b.at && a.generation < b.generation));
  let generation = 0;

  const isCurrent = (slot: Slot): boolean => slot.entry.generation === slot.generation;

  const schedule = (entry: Entry, at: number): void => {
    generation += 1;
    entry.generation = generation;
    heap.push({ at, entry, generation });
  };

  const remove = (id: string): void => {
    const entry = entries.get(id);
    if (entry === undefined) return;
    entry.generation = 0;
    entries.delete(id);
  };

  const compact = (): void => {
    if (heap.size > 2 * entries.size + compactionSlack) heap.retain(isCurrent);
  };

  const enqueueOne = ({ id, kind, requestId, runAt, attempt }: DueItem): void => {
    remove(id);
    const entry: Entry = { id, kind, requestId, runAt, attempt, leaseToken: null, generation: 0 };
    entries.set(id, entry);
    schedule(entry, runAt);
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
      compact();
    },
    async enqueue(items) {
      for (const item of items) enqueueOne(item);
      compact();
    },
    async claim(now, limit, leaseMs) {
      const claimed: ClaimedDueItem[] = [];
      const leased: Entry[] = [];
      while (claimed.length < limit) {
        const top = heap.peek();
        if (top === undefined || top.at > now) break;
        heap.pop();
        if (!isCurrent(top)) continue;
        const { entry } = top;
        const leaseToken = `lease_${top.generation}`;
        entry.leaseToken = leaseToken;
        leased.push(entry);
        claimed.push({ ...copyItem(entry), leaseToken });
      }
      // Rescheduled only after the loop: with leaseMs 0 the lease ends at `now`, and the same item
      // must not come out twice in one claim.
      for (const entry of leased) schedule(entry, now + leaseMs);
      return claimed;
    },
    async complete(item) {
      if (owned(item) !== undefined) remove(item.id);
      compact();
    },
    async reschedule(item, runAt) {
      const entry = owned(item);
      if (entry === undefined) return;
      entry.runAt = runAt;
      entry.attempt += 1;
      entry.leaseToken = null;
      schedule(entry, runAt);
    },
    async nextRunAt() {
      for (let top = heap.peek(); top !== undefined; top = heap.peek()) {
        if (isCurrent(top)) return top.at;
        heap.pop();
      }
      return null;
    },
  } satisfies MemoryDueWorkStore;
}

import { describe, expect, it } from 'vitest';
import { createMinHeap, type HeapPosition } from '../../adapters/storage/memory/min-heap.js';

interface Item extends HeapPosition {
  key: number;
  name: number;
}

const byKeyThenName = (a: Item, b: Item): boolean => a.key < b.key || (a.key === b.key && a.name < b.name);

/** A deterministic stream of numbers in [0, 1), so that a failure replays. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/** Takes everything out of `heap`, smallest first. */
function drain(heap: ReturnType<typeof createMinHeap<Item>>): Item[] {
  const out: Item[] = [];
  for (let top = heap.peek(); top !== undefined; top = heap.peek()) {
    heap.remove(top);
    out.push(top);
  }
  return out;
}

describe('memory min-heap with positions', () => {
  it('keeps the smallest on top through random pushes, removals and key changes, and drains in order', () => {
    const random = seeded(7);
    const heap = createMinHeap<Item>(byKeyThenName);
    const inHeap = new Set<Item>();
    const out = new Set<Item>();
    for (let step = 0; step < 5_000; step += 1) {
      const roll = random();
      const members = [...inHeap];
      const any = members[Math.floor(random() * members.length)];
      if (roll < 0.45 || any === undefined) {
        const item = { key: Math.floor(random() * 100), name: step, heapIndex: -1 };
        heap.push(item);
        inHeap.add(item);
      } else if (roll < 0.7) {
        heap.remove(any);
        inHeap.delete(any);
        out.add(any);
      } else {
        any.key = Math.floor(random() * 100);
        heap.reorder(any);
      }
      const smallest = [...inHeap].sort((a, b) => (byKeyThenName(a, b) ? -1 : 1))[0];
      expect(heap.peek()).toBe(smallest);
    }
    for (const item of out) expect(item.heapIndex).toBe(-1);
    const drained = drain(heap);
    expect(drained).toEqual([...inHeap].sort((a, b) => (byKeyThenName(a, b) ? -1 : 1)));
    expect(drained.every((item) => item.heapIndex === -1)).toBe(true);
  });

  it('does nothing when asked to remove a value it does not hold', () => {
    const heap = createMinHeap<Item>(byKeyThenName);
    const held = { key: 1, name: 1, heapIndex: -1 };
    heap.push(held);
    heap.remove({ key: 0, name: 0, heapIndex: -1 });
    expect(drain(heap)).toEqual([held]);
  });
});

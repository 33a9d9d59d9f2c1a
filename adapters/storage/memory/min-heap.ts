/** What a value of a {@link MinHeap} keeps of its place in it; the heap alone writes it. */
export interface HeapPosition {
  /** Index in the heap's array, or -1 while the value is not in the heap. */
  heapIndex: number;
}

/**
 * A binary min-heap whose values know their place in it, so that one can be removed or moved after
 * its key changed in O(log n), without a stale copy left behind to skip later.
 */
export interface MinHeap<T extends HeapPosition> {
  /** The smallest value, or undefined when empty. */
  peek(): T | undefined;
  /** Adds `value`, which must not be in the heap. */
  push(value: T): void;
  /** Takes `value` out of the heap; nothing when it is not in it. */
  remove(value: T): void;
  /** Restores the order after the key of `value`, which must be in the heap, changed. */
  reorder(value: T): void;
}

/** Creates an empty heap ordered by `less` (true when `a` must come out before `b`). */
export function createMinHeap<T extends HeapPosition>(less: (a: T, b: T) => boolean): MinHeap<T> {
  const nodes: T[] = [];

  const place = (value: T, index: number): void => {
    nodes[index] = value;
    value.heapIndex = index;
  };

  /** Moves `value`, at `start`, towards the root while it is less than its parent. */
  const siftUp = (value: T, start: number): void => {
    let i = start;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const above = nodes[parent]!;
      if (!less(value, above)) break;
      place(above, i);
      i = parent;
    }
    place(value, i);
  };

  /** Moves `value`, at `start`, towards the leaves while a child is less than it. */
  const siftDown = (value: T, start: number): void => {
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= nodes.length) break;
      const right = left + 1;
      const child = right < nodes.length && less(nodes[right]!, nodes[left]!) ? right : left;
      const below = nodes[child]!;
      if (!less(below, value)) break;
      place(below, i);
      i = child;
    }
    place(value, i);
  };

  const reorder = (value: T): void => {
    const index = value.heapIndex;
    if (index > 0 && less(value, nodes[(index - 1) >> 1]!)) siftUp(value, index);
    else siftDown(value, index);
  };

  return {
    peek: () => nodes[0],
    push(value) {
      nodes.push(value);
      siftUp(value, nodes.length - 1);
    },
    remove(value) {
      const index = value.heapIndex;
      if (index < 0) return;
      value.heapIndex = -1;
      const last = nodes.pop()!;
      if (last === value) return;
      place(last, index);
      reorder(last);
    },
    reorder,
  };
}

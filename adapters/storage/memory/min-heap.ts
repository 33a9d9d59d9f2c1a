/** A binary min-heap: O(log n) push and pop, O(1) peek. */
export interface MinHeap<T> {
  /** Number of values held, including any the owner treats as deleted. */
  readonly size: number;
  push(value: T): void;
  /** The smallest value, or undefined when empty. */
  peek(): T | undefined;
  /** Removes and returns the smallest value, or undefined when empty. */
  pop(): T | undefined;
  /** Keeps only the values that pass `keep`, restoring heap order in O(n). */
  retain(keep: (value: T) => boolean): void;
}

/** Creates an empty heap ordered by `less` (true when `a` must come out before `b`). */
export function createMinHeap<T>(less: (a: T, b: T) => boolean): MinHeap<T> {
  let nodes: T[] = [];

  const swap = (i: number, j: number): void => {
    const a = nodes[i]!;
    nodes[i] = nodes[j]!;
    nodes[j] = a;
  };

  const siftUp = (start: number): void => {
    let i = start;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!less(nodes[i]!, nodes[parent]!)) return;
      swap(i, parent);
      i = parent;
    }
  };

  const siftDown = (start: number): void => {
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < nodes.length && less(nodes[left]!, nodes[smallest]!)) smallest = left;
      if (right < nodes.length && less(nodes[right]!, nodes[smallest]!)) smallest = right;
      if (smallest === i) return;
      swap(i, smallest);
      i = smallest;
    }
  };

  return {
    get size() {
      return nodes.length;
    },
    push(value) {
      nodes.push(value);
      siftUp(nodes.length - 1);
    },
    peek() {
      return nodes[0];
    },
    pop() {
      const top = nodes[0];
      const last = nodes.pop();
      if (nodes.length > 0 && last !== undefined) {
        nodes[0] = last;
        siftDown(0);
      }
      return top;
    },
    retain(keep) {
      nodes = nodes.filter(keep);
      for (let i = (nodes.length >> 1) - 1; i >= 0; i -= 1) siftDown(i);
    },
  };
}

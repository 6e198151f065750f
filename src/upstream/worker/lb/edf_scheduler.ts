// Earliest Deadline First scheduling of weighted items (Envoy's edf_scheduler.h): an item of
// weight w is due every 1/w time units, so over time it is picked in proportion to w.
// Entries with equal deadlines come out in insertion order (FIFO), which keeps picks stable.

interface Entry<T> {
  deadline: number;
  /** Insertion sequence number: the tie breaker. */
  order: number;
  item: T;
}

export class EdfScheduler<T> {
  /** A binary min-heap on (deadline, order). */
  private readonly heap: Entry<T>[] = [];
  private currentTime = 0;
  private nextOrder = 0;

  get size(): number {
    return this.heap.length;
  }

  add(weight: number, item: T): void {
    this.heap.push({ deadline: this.currentTime + 1 / weight, order: this.nextOrder++, item });
    this.siftUp(this.heap.length - 1);
  }

  /**
   * Returns the item with the earliest deadline and schedules it again with the weight
   * `weightOf` gives it now (weights may change between picks).
   */
  pickAndAdd(weightOf: (item: T) => number): T | null {
    const top = this.heap[0];
    if (top === undefined) return null;
    this.currentTime = top.deadline;
    // Re-adding the picked entry is replacing the heap top and sifting it down.
    top.deadline = this.currentTime + 1 / weightOf(top.item);
    top.order = this.nextOrder++;
    this.siftDown(0);
    return top.item;
  }

  private siftUp(index: number): void {
    const heap = this.heap;
    const entry = heap[index];
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!before(entry, heap[parent])) break;
      heap[index] = heap[parent];
      index = parent;
    }
    heap[index] = entry;
  }

  private siftDown(index: number): void {
    const heap = this.heap;
    const entry = heap[index];
    const n = heap.length;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap[child + 1], heap[child])) child++;
      if (!before(heap[child], entry)) break;
      heap[index] = heap[child];
      index = child;
    }
    heap[index] = entry;
  }
}

function before<T>(a: Entry<T>, b: Entry<T>): boolean {
  return a.deadline < b.deadline || (a.deadline === b.deadline && a.order < b.order);
}

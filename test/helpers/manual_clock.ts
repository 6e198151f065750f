// A Clock that moves only when a test says so: intervals fire inside advance(), in time order,
// with now() reading the moment each one is due.

import type { Clock, IntervalHandle } from '../../src/common/clock';

interface Interval {
  readonly fn: () => void;
  readonly ms: number;
  dueAt: number;
}

export class ManualClock implements Clock {
  private time = 0;
  private readonly intervals = new Set<Interval>();

  now(): number {
    return this.time;
  }

  setInterval(fn: () => void, ms: number): IntervalHandle {
    const interval: Interval = { fn, ms, dueAt: this.time + ms };
    this.intervals.add(interval);
    return interval as unknown as IntervalHandle;
  }

  clearInterval(handle: IntervalHandle): void {
    this.intervals.delete(handle as unknown as Interval);
  }

  /** How many intervals are set. */
  get pending(): number {
    return this.intervals.size;
  }

  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      let next: Interval | null = null;
      for (const interval of this.intervals) if (interval.dueAt <= end && (next === null || interval.dueAt < next.dueAt)) next = interval;
      if (next === null) break;
      this.time = next.dueAt;
      next.dueAt += next.ms;
      next.fn();
    }
    this.time = end;
  }
}

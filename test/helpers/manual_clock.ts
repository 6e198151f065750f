// A Clock that moves only when a test says so: intervals and timeouts fire inside advance(), in
// time order (ties in the order they were set), with now() reading the moment each one is due.

import type { Clock, IntervalHandle, TimeoutHandle, Timer as ClockTimer } from '../../src/common/clock';

interface Timer {
  readonly fn: () => void;
  /** The repeat period; null for a one-shot timeout. */
  readonly ms: number | null;
  dueAt: number;
  readonly order: number;
}

export class ManualClock implements Clock {
  private time = 0;
  private setCount = 0;
  private readonly timers = new Set<Timer>();

  now(): number {
    return this.time;
  }

  eventNow(): number {
    return this.time;
  }

  setInterval(fn: () => void, ms: number): IntervalHandle {
    return this.add(fn, ms, ms) as unknown as IntervalHandle;
  }

  clearInterval(handle: IntervalHandle): void {
    this.timers.delete(handle as unknown as Timer);
  }

  setTimeout(fn: () => void, ms: number): TimeoutHandle {
    return this.add(fn, null, ms) as unknown as TimeoutHandle;
  }

  clearTimeout(handle: TimeoutHandle): void {
    this.timers.delete(handle as unknown as Timer);
  }

  createTimer(fn: () => void): ClockTimer {
    return new ManualTimer(this, fn);
  }

  /** How many intervals and timeouts are set. */
  get pending(): number {
    return this.timers.size;
  }

  /** When each pending timer is next due, relative to now, soonest first. */
  pendingDelays(): number[] {
    return [...this.timers].map((timer) => timer.dueAt - this.time).sort((a, b) => a - b);
  }

  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      let next: Timer | null = null;
      for (const timer of this.timers) {
        if (timer.dueAt > end) continue;
        if (next === null || timer.dueAt < next.dueAt || (timer.dueAt === next.dueAt && timer.order < next.order)) next = timer;
      }
      if (next === null) break;
      this.time = next.dueAt;
      if (next.ms === null) this.timers.delete(next);
      else next.dueAt += next.ms;
      next.fn();
    }
    this.time = end;
  }

  private add(fn: () => void, period: number | null, delay: number): Timer {
    const timer: Timer = { fn, ms: period, dueAt: this.time + Math.max(0, delay), order: this.setCount++ };
    this.timers.add(timer);
    return timer;
  }
}

/** A Clock Timer on a ManualClock: each enable() sets a timeout, dropping the one before. */
class ManualTimer implements ClockTimer {
  private handle: TimeoutHandle | null = null;
  private ms = 0;

  constructor(
    private readonly clock: ManualClock,
    private readonly fn: () => void,
  ) {}

  get enabled(): boolean {
    return this.handle !== null;
  }

  enable(ms: number): void {
    this.disable();
    this.ms = ms;
    this.handle = this.clock.setTimeout(this.onTimeout, ms);
  }

  refresh(): void {
    if (this.handle !== null) this.enable(this.ms);
  }

  disable(): void {
    if (this.handle !== null) this.clock.clearTimeout(this.handle);
    this.handle = null;
  }

  close(): void {
    this.disable();
  }

  private readonly onTimeout = (): void => {
    this.handle = null;
    this.fn();
  };
}

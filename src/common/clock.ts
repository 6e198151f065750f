// Time for whatever is timed by intervals or one-shot timers, injected so that a test drives it by hand
// (test/helpers/manual_clock.ts) instead of waiting.

/** The longest delay Node's setTimeout honours (2^31 - 1 ms, about 24.8 days); a longer one fires after 1 ms. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * A configured or requested delay for a plain Node timer of the data path (a connection's or a
 * request's timeout, re-armed with refresh()): capped at Node's range, so that a longer one waits
 * 24.8 days rather than firing at once. Timers that must keep exact time go through a Clock.
 */
export function boundedTimerDelay(ms: number): number {
  return ms > MAX_TIMEOUT_MS ? MAX_TIMEOUT_MS : ms;
}

/** What setInterval returned, for clearInterval only. */
export interface IntervalHandle {
  readonly __interval: unique symbol;
}

/** What setTimeout returned, for clearTimeout only. */
export interface TimeoutHandle {
  readonly __timeout: unique symbol;
}

export interface Clock {
  /** Monotonic milliseconds. */
  now(): number;
  /** Calls `fn` every `ms` milliseconds, the first time `ms` from now, however long `ms` is. */
  setInterval(fn: () => void, ms: number): IntervalHandle;
  clearInterval(handle: IntervalHandle): void;
  /** Calls `fn` once, `ms` milliseconds from now, however far that is. */
  setTimeout(fn: () => void, ms: number): TimeoutHandle;
  clearTimeout(handle: TimeoutHandle): void;
}

/**
 * The process's clock. Its intervals and timeouts never keep the process alive: what they time is
 * housekeeping, which matters only while a listener or a worker keeps the process running.
 */
export class SystemClock implements Clock {
  /** `maxTimerMs` is the longest single Node timer; only a test sets it lower, to see a long timeout re-armed. */
  constructor(readonly maxTimerMs: number = MAX_TIMEOUT_MS) {}

  now(): number {
    return performance.now();
  }

  setInterval(fn: () => void, ms: number): IntervalHandle {
    if (ms > this.maxTimerMs) return new LongTimer(this, fn, this.now() + ms, ms) as unknown as IntervalHandle;
    const timer = setInterval(fn, ms);
    timer.unref();
    return timer as unknown as IntervalHandle;
  }

  clearInterval(handle: IntervalHandle): void {
    if (handle instanceof LongTimer) handle.cancel();
    else clearInterval(handle as unknown as NodeJS.Timeout);
  }

  setTimeout(fn: () => void, ms: number): TimeoutHandle {
    if (ms > this.maxTimerMs) return new LongTimer(this, fn, this.now() + ms, null) as unknown as TimeoutHandle;
    const timer = setTimeout(fn, ms);
    timer.unref();
    return timer as unknown as TimeoutHandle;
  }

  clearTimeout(handle: TimeoutHandle): void {
    if (handle instanceof LongTimer) handle.cancel();
    else clearTimeout(handle as unknown as NodeJS.Timeout);
  }
}

/**
 * A timeout or interval beyond one Node timer's range: re-armed, a range at a time, until its
 * deadline; an interval (`period` not null) then starts the next one.
 */
class LongTimer {
  private timer: NodeJS.Timeout;

  constructor(
    private readonly clock: SystemClock,
    private readonly fn: () => void,
    private deadline: number,
    private readonly period: number | null,
  ) {
    this.timer = this.arm();
  }

  cancel(): void {
    clearTimeout(this.timer);
  }

  private arm(): NodeJS.Timeout {
    const timer = setTimeout(this.onStep, Math.min(this.deadline - this.clock.now(), this.clock.maxTimerMs));
    timer.unref();
    return timer;
  }

  private readonly onStep = (): void => {
    if (this.clock.now() < this.deadline) {
      this.timer = this.arm();
      return;
    }
    // Re-armed before the call, so that `fn` may clear the interval.
    if (this.period !== null) {
      this.deadline += this.period;
      this.timer = this.arm();
    }
    this.fn();
  };
}

// Time for whatever is timed by intervals, injected so that a test drives it by hand
// (test/helpers/manual_clock.ts) instead of waiting.

/** What setInterval returned, for clearInterval only. */
export interface IntervalHandle {
  readonly __interval: unique symbol;
}

export interface Clock {
  /** Monotonic milliseconds. */
  now(): number;
  /** Calls `fn` every `ms` milliseconds, the first time `ms` from now. */
  setInterval(fn: () => void, ms: number): IntervalHandle;
  clearInterval(handle: IntervalHandle): void;
}

/**
 * The process's clock. Its intervals never keep the process alive: what they time is
 * housekeeping, which matters only while a listener or a worker keeps the process running.
 */
export class SystemClock implements Clock {
  now(): number {
    return performance.now();
  }

  setInterval(fn: () => void, ms: number): IntervalHandle {
    const timer = setInterval(fn, ms);
    timer.unref();
    return timer as unknown as IntervalHandle;
  }

  clearInterval(handle: IntervalHandle): void {
    clearInterval(handle as unknown as NodeJS.Timeout);
  }
}

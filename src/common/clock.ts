// Time for whatever is timed by intervals or one-shot timers, injected so that a test drives it by hand
// (test/helpers/manual_clock.ts) instead of waiting.

/** The longest delay Node's setTimeout honours (2^31 - 1 ms, about 24.8 days); a longer one fires after 1 ms. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;


/** What setInterval returned, for clearInterval only. */
export interface IntervalHandle {
  readonly __interval: unique symbol;
}

/** What setTimeout returned, for clearTimeout only. */
export interface TimeoutHandle {
  readonly __timeout: unique symbol;
}

/**
 * A one-shot timer armed again and again (Envoy's Event::Timer): a connection's or a request's
 * timeout. Re-arming it reuses one Node timer (refresh()), so a request costs no allocation.
 */
export interface Timer {
  /** Fires `ms` from now, however far that is, in place of any earlier arming. */
  enable(ms: number): void;
  /** Restarts the delay it was enabled with, counting from now; nothing when disabled. */
  refresh(): void;
  /** It will not fire until enabled again. */
  disable(): void;
  readonly enabled: boolean;
  /** Releases it for good. */
  close(): void;
}

export interface Clock {
  /** Monotonic milliseconds. */
  now(): number;
  /**
   * now() as of the event being handled: read once, then the same for all its callback does,
   * until its microtasks run. A request is stamped in a few bursts (its head arrives, its
   * response arrives): each burst pays one clock read, not one per stamp.
   */
  eventNow(): number;
  /** A timer that calls `fn` when it runs out, disabled until enable(). */
  createTimer(fn: () => void): Timer;
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
  /** eventNow() of the event under way; -1 between events. */
  private eventTime = -1;

  /** `maxTimerMs` is the longest single Node timer; only a test sets it lower, to see a long timeout re-armed. */
  constructor(readonly maxTimerMs: number = MAX_TIMEOUT_MS) {}

  now(): number {
    return performance.now();
  }

  eventNow(): number {
    if (this.eventTime < 0) {
      this.eventTime = performance.now();
      queueMicrotask(this.endEvent);
    }
    return this.eventTime;
  }

  private readonly endEvent = (): void => {
    this.eventTime = -1;
  };

  createTimer(fn: () => void): Timer {
    return new SystemTimer(this, fn);
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
 * A Timer on one Node timer, kept from arming to arming: a disabled one that still fires is
 * ignored rather than cleared, so that the next enable() is a refresh(). A delay beyond Node's
 * range goes through a LongTimer.
 */
class SystemTimer implements Timer {
  enabled = false;
  private timer: NodeJS.Timeout | null = null;
  private long: LongTimer | null = null;
  private ms = 0;

  constructor(
    private readonly clock: SystemClock,
    private readonly fn: () => void,
  ) {}

  enable(ms: number): void {
    this.enabled = true;
    if (ms > this.clock.maxTimerMs || this.long !== null) {
      this.long?.cancel();
      this.long = null;
      if (ms > this.clock.maxTimerMs) {
        this.ms = ms;
        this.long = new LongTimer(this.clock, this.onTimeout, this.clock.now() + ms, null);
        return;
      }
    }
    if (this.timer !== null && this.ms === ms) {
      this.timer.refresh();
      return;
    }
    if (this.timer !== null) clearTimeout(this.timer);
    this.ms = ms;
    this.timer = setTimeout(this.onTimeout, ms);
    this.timer.unref();
  }

  refresh(): void {
    if (!this.enabled) return;
    if (this.long !== null) this.enable(this.ms);
    else this.timer?.refresh();
  }

  disable(): void {
    this.enabled = false;
  }

  close(): void {
    this.enabled = false;
    if (this.timer !== null) clearTimeout(this.timer);
    this.long?.cancel();
    this.timer = this.long = null;
  }

  private readonly onTimeout = (): void => {
    if (!this.enabled) return;
    this.enabled = false;
    this.fn();
  };
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

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
 * A Timer on one Node timer, moved lazily: re-arming a Node timer costs about 100 ns, and a
 * request re-arms several (its idle timeout at every read and write, its route timeout, its
 * connection's idle timeout). enable() and refresh() only set the deadline when the Node timer
 * already fires by then; one that fires before the deadline is armed again for the rest, and one
 * that fires while disabled is ignored. A delay beyond Node's range goes through a LongTimer.
 */
class SystemTimer implements Timer {
  enabled = false;
  private timer: NodeJS.Timeout | null = null;
  private long: LongTimer | null = null;
  private ms = 0;
  /** When it is due, on the clock's eventNow(). */
  private deadline = 0;
  /** The latest the armed Node timer fires; -1 when none is armed. */
  private firesBy = -1;

  constructor(
    private readonly clock: SystemClock,
    private readonly fn: () => void,
  ) {}

  enable(ms: number): void {
    this.enabled = true;
    this.ms = ms;
    this.long?.cancel();
    this.long = null;
    if (ms > this.clock.maxTimerMs) {
      this.stopNodeTimer();
      this.long = new LongTimer(this.clock, this.fire, this.clock.now() + ms, null);
      return;
    }
    this.armBy(this.clock.eventNow() + ms);
  }

  refresh(): void {
    if (!this.enabled) return;
    if (this.long !== null) this.enable(this.ms);
    else this.armBy(this.clock.eventNow() + this.ms);
  }

  disable(): void {
    this.enabled = false;
  }

  close(): void {
    this.enabled = false;
    this.stopNodeTimer();
    this.long?.cancel();
    this.long = null;
  }

  private armBy(deadline: number): void {
    this.deadline = deadline;
    if (this.firesBy < 0 || this.firesBy > deadline) this.startNodeTimer(deadline - this.clock.eventNow());
  }

  private startNodeTimer(delay: number): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(this.onNodeTimer, delay);
    this.timer.unref();
    this.firesBy = this.clock.eventNow() + delay;
  }

  private stopNodeTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.firesBy = -1;
  }

  private readonly onNodeTimer = (): void => {
    this.firesBy = -1;
    if (!this.enabled || this.long !== null) return;
    // Node's timers count from the loop's time, a little before ours, and keep whole
    // milliseconds: within one of the deadline it is due.
    const left = this.deadline - this.clock.eventNow();
    if (left > 1) this.startNodeTimer(left);
    else this.fire();
  };

  private readonly fire = (): void => {
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

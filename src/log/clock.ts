/** A wall-clock instant split as spdlog's pattern needs it. */
export interface Timestamp {
  /** Whole seconds since the Unix epoch. */
  readonly seconds: number;
  /** Nanoseconds within that second. */
  readonly nanos: number;
}

const NANOS_PER_SECOND = 1e9;
const NANOS_PER_MILLI = 1e6;

/**
 * Beyond this gap from Date.now() (whose own truncation accounts for up to 1 ms), the wall clock
 * has been stepped (NTP, suspend, an operator): re-anchor rather than print drifted time.
 */
const MAX_DRIFT_MS = 2;

/**
 * Wall-clock time with nanosecond digits for %f and %F: Date.now() only has milliseconds, so
 * the monotonic process.hrtime() is anchored to the epoch and checked against the wall clock.
 */
export class HighResolutionClock {
  private offsetSeconds = 0;
  private offsetNanos = 0;

  constructor() {
    this.anchor();
  }

  now(): Timestamp {
    const time = this.read();
    if (Math.abs(time.seconds * 1000 + time.nanos / NANOS_PER_MILLI - Date.now()) <= MAX_DRIFT_MS) {
      return time;
    }
    this.anchor();
    return this.read();
  }

  private read(): Timestamp {
    const [hrSeconds, hrNanos] = process.hrtime();
    const nanos = hrNanos + this.offsetNanos;
    return nanos < NANOS_PER_SECOND
      ? { seconds: hrSeconds + this.offsetSeconds, nanos }
      : { seconds: hrSeconds + this.offsetSeconds + 1, nanos: nanos - NANOS_PER_SECOND };
  }

  private anchor(): void {
    const wallMs = Date.now();
    const [hrSeconds, hrNanos] = process.hrtime();
    const nanos = (wallMs % 1000) * NANOS_PER_MILLI - hrNanos;
    const seconds = Math.floor(wallMs / 1000) - hrSeconds;
    this.offsetSeconds = nanos < 0 ? seconds - 1 : seconds;
    this.offsetNanos = nanos < 0 ? nanos + NANOS_PER_SECOND : nanos;
  }
}

// A body let out at a rate (Envoy's StreamRateLimiter, the fault filter's response_rate_limit):
// the body is held and written in slices of a sixteenth of a second's worth, from a bucket of
// sixteen slices refilled at sixteen a second, so a second's worth goes at once and the rest
// follows evenly. Held body over the stream's buffer limit backs the upstream up.

import type { Clock, Timer } from '../../common/clock';

const SLICES_PER_SECOND = 16;

export interface RateLimitedSink {
  /** A slice of the body goes on. */
  write(chunk: Buffer): void;
  /** Everything held went out after the end arrived: the end may go on. */
  onDrained(): void;
  /** Held body went over the limit (true) or drained to half of it (false). */
  onWatermark(above: boolean): void;
}

export class StreamRateLimiter {
  private readonly bytesPerSlice: number;
  private readonly timer: Timer;
  private readonly held: Buffer[] = [];
  private heldBytes = 0;
  private tokens = SLICES_PER_SECOND;
  private lastFillMs: number;
  private ended = false;
  private aboveLimit = false;

  constructor(
    kbps: number,
    private readonly bufferLimit: number,
    private readonly clock: Clock,
    private readonly sink: RateLimitedSink,
  ) {
    this.bytesPerSlice = Math.max(1, Math.floor((kbps * 1024) / SLICES_PER_SECOND));
    this.lastFillMs = clock.now();
    this.timer = clock.createTimer(() => this.onTimer());
  }

  /** A body chunk to let out. */
  writeData(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.held.push(chunk);
    this.heldBytes += chunk.length;
    if (!this.aboveLimit && this.heldBytes > this.bufferLimit) {
      this.aboveLimit = true;
      this.sink.onWatermark(true);
    }
    if (!this.timer.enabled) this.timer.enable(0);
  }

  /** The body ended: true when nothing is held and the end may go on now; else onDrained says when. */
  end(): boolean {
    this.ended = true;
    return this.heldBytes === 0;
  }

  /** The stream is gone: nothing more is written. */
  destroy(): void {
    this.timer.close();
    this.held.length = 0;
    this.heldBytes = 0;
  }

  private onTimer(): void {
    const now = this.clock.now();
    this.tokens = Math.min(SLICES_PER_SECOND, this.tokens + ((now - this.lastFillMs) * SLICES_PER_SECOND) / 1000);
    this.lastFillMs = now;
    const slices = Math.min(Math.floor(this.tokens), Math.ceil(this.heldBytes / this.bytesPerSlice));
    if (slices > 0) {
      this.tokens -= slices;
      this.sink.write(this.take(Math.min(this.heldBytes, slices * this.bytesPerSlice)));
    }
    if (this.aboveLimit && this.heldBytes <= this.bufferLimit / 2) {
      this.aboveLimit = false;
      this.sink.onWatermark(false);
    }
    if (this.heldBytes > 0) {
      // The next slice's token.
      this.timer.enable(Math.max(1, Math.ceil(((1 - (this.tokens % 1)) * 1000) / SLICES_PER_SECOND)));
    } else if (this.ended) {
      this.sink.onDrained();
    }
  }

  /** The first `bytes` held, as one buffer. */
  private take(bytes: number): Buffer {
    const parts: Buffer[] = [];
    let needed = bytes;
    while (needed > 0) {
      const first = this.held[0];
      if (first.length <= needed) {
        parts.push(first);
        this.held.shift();
        needed -= first.length;
      } else {
        parts.push(first.subarray(0, needed));
        this.held[0] = first.subarray(needed);
        needed = 0;
      }
    }
    this.heldBytes -= bytes;
    return parts.length === 1 ? parts[0] : Buffer.concat(parts);
  }
}

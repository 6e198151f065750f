// One name's resolve loop: resolve now, then again after whatever delay that resolution chose
// (refresh rate, TTL or backoff), until closed. Closing aborts the resolution in flight.

import type { Clock, TimeoutHandle } from '../../../common/clock';

/** Resolves once and returns the delay before the next time; must not reject. */
export type ResolveOnce = (signal: AbortSignal) => Promise<number>;

export class RefreshTimer {
  private timer: TimeoutHandle | null = null;
  private readonly abort = new AbortController();

  constructor(
    private readonly clock: Clock,
    private readonly resolveOnce: ResolveOnce,
  ) {}

  start(): void {
    void this.run();
  }

  close(): void {
    this.abort.abort();
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private async run(): Promise<void> {
    this.timer = null;
    const delayMs = await this.resolveOnce(this.abort.signal);
    if (this.abort.signal.aborted) return;
    this.timer = this.clock.setTimeout(() => void this.run(), delayMs);
  }
}

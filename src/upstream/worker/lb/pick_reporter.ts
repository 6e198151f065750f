// What an ORIGINAL_DST balancer tells the supervisor about its picks, so that the supervisor's
// cleanup (supervisor/original_dst_cluster.ts) keeps the hosts in use and makes the new ones. A
// destination not reported during the current window is reported at once (a new host joins
// without delay); picks of one already reported wait for the window's end, one message for all
// of them. The window is a quarter of cleanup_interval: a pick then reaches the supervisor before
// the sweep after next at the latest, and the mark it sets is never missed by a sweep that
// should see it.

import type { SocketAddress } from '../../../config/model';
import type { Clock, TimeoutHandle } from '../../../common/clock';

export class PickReporter {
  /** Reported in the current window, by address string. */
  private reported = new Set<string>();
  /** Picked again after their report in the current window: sent when it ends. */
  private pending = new Map<string, SocketAddress>();
  private timer: TimeoutHandle | null = null;
  private readonly windowMs: number;

  constructor(
    cleanupIntervalMs: number,
    private readonly clock: Clock,
    private readonly send: (addresses: readonly SocketAddress[]) => void,
  ) {
    this.windowMs = Math.max(1, Math.floor(cleanupIntervalMs / 4));
  }

  /** `key`: the address string of `address` (addressString), which keys hosts everywhere. */
  picked(key: string, address: SocketAddress): void {
    if (!this.reported.has(key)) {
      this.reported.add(key);
      this.send([address]);
      this.timer ??= this.clock.setTimeout(this.endWindow, this.windowMs);
    } else if (!this.pending.has(key)) {
      this.pending.set(key, address);
    }
  }

  private readonly endWindow = (): void => {
    this.timer = null;
    const pending = this.pending;
    // What is sent now counts as reported in the next window, which runs only if there is any.
    this.reported = new Set(pending.keys());
    this.pending = new Map();
    if (pending.size === 0) return;
    this.send([...pending.values()]);
    this.timer = this.clock.setTimeout(this.endWindow, this.windowMs);
  };
}

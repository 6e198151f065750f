// common_lb_config.update_merge_window, as Envoy's cluster manager schedules updates for its
// workers: a change of health, weight or metadata alone that comes within the window of the
// last delivery is held, merged with the ones after it, and delivered once when the window
// (started at the first held change) ends. A change that adds or removes hosts goes at once,
// carrying what was held; so does any change after a quiet window, the cluster's first included.

import type { Clock, TimeoutHandle } from '../../common/clock';
import type { Counter } from '../../stats/stats';
import type { MembershipUpdate } from '../shared/membership';

/** Envoy's cluster_manager counters for the merge window. */
export interface MergeWindowStats {
  /** Updates delivered at once. */
  readonly clusterUpdated: Counter;
  /** Merged updates delivered when their window ended. */
  readonly clusterUpdatedViaMerge: Counter;
  /** Held updates delivered early, with a host added or removed. */
  readonly updateMergeCancelled: Counter;
  /** Mergeable updates delivered at once, the window since the last delivery having passed. */
  readonly updateOutOfMergeWindow: Counter;
}

export class UpdateMergeWindow {
  /** The held changes, as one update from the version the workers have. */
  private held: MembershipUpdate | null = null;
  private timer: TimeoutHandle | null = null;
  private lastDeliveryAt = Number.NEGATIVE_INFINITY;

  constructor(
    /** 0 disables merging. */
    private readonly windowMs: number,
    private readonly clock: Clock,
    private readonly stats: MergeWindowStats,
    private readonly deliver: (update: MembershipUpdate) => void,
  ) {}

  /** The next update of the cluster, made against the one before it. */
  offer(update: MembershipUpdate): void {
    if (this.windowMs > 0) {
      const mergeable = update.added.length === 0 && update.removed.length === 0;
      const now = this.clock.now();
      const outOfWindow = now - this.lastDeliveryAt > this.windowMs;
      if (mergeable && !outOfWindow) {
        this.held = merged(this.held, update);
        this.timer ??= this.clock.setTimeout(() => this.flush(), this.windowMs);
        return;
      }
      if (mergeable) this.stats.updateOutOfMergeWindow.inc();
      if (this.timer !== null) {
        this.clock.clearTimeout(this.timer);
        this.timer = null;
        this.stats.updateMergeCancelled.inc();
      }
      this.lastDeliveryAt = now;
    }
    const next = merged(this.held, update);
    this.held = null;
    this.stats.clusterUpdated.inc();
    this.deliver(next);
  }

  /** Drops what is held: the cluster is going away. */
  close(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.held = null;
  }

  private flush(): void {
    this.timer = null;
    const held = this.held;
    this.held = null;
    if (held === null) return;
    this.lastDeliveryAt = this.clock.now();
    this.stats.clusterUpdatedViaMerge.inc();
    this.deliver(held);
  }
}

/**
 * `next` applied after `held`, as one update from `held`'s base. Held updates add and remove
 * nothing, so the hosts added and removed are `next`'s; a host changed and then removed is removed.
 */
export function merged(held: MembershipUpdate | null, next: MembershipUpdate): MembershipUpdate {
  if (held === null) return next;
  const gone = new Set([...next.added, ...next.removed]);
  const changed = [...new Set([...held.changed, ...next.changed])].filter((key) => !gone.has(key));
  return { ...next, baseVersion: held.baseVersion, changed };
}

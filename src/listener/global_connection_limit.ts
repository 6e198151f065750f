// The runtime key overload.global_downstream_max_connections (Envoy 1.16): the listeners of all
// the workers together hold at most that many downstream connections; one more is closed as it
// is accepted and counted in its listener's downstream_global_cx_overflow. Envoy counts per
// process, and the workers are the one proxy here, so the count is shared by them (SharedCounts:
// a dead worker's share is taken back). Kept without the key too, so that a key set later by
// RTDS or /runtime_modify finds the connections already open.

import type { RuntimeSource } from '../runtime/live_runtime';
import type { SharedCounts } from '../stats/shared_counts';

export const GLOBAL_MAX_CONNECTIONS_KEY = 'overload.global_downstream_max_connections';

/** The name of the shared count in the stats region (cells, which /stats never lists). */
export const GLOBAL_CONNECTIONS_CELLS = 'overload.global_downstream_connections';

export class GlobalConnectionLimit {
  constructor(
    private readonly count: SharedCounts,
    private readonly runtime: RuntimeSource,
  ) {}

  /** Counts a new connection in; false, counting nothing, when the limit is reached. */
  tryAcquire(): boolean {
    return this.count.tryIncrement(0, this.runtime.snapshot().getInteger(GLOBAL_MAX_CONNECTIONS_KEY, Number.POSITIVE_INFINITY));
  }

  /** A connection tryAcquire counted has closed. */
  release(): void {
    this.count.add(0, -1);
  }
}

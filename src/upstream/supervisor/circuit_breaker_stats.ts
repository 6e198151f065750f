// The `cluster.<stat_name>.circuit_breakers.<default|high>.*` gauges (Envoy's
// ALL_CLUSTER_CIRCUIT_BREAKERS_STATS): `*_open` is 1 while a resource is at its limit, and with
// track_remaining `remaining_*` is what is left of it. They describe the cluster over every
// worker, so the supervisor alone sets them (never_import), from the shared counts, before each
// read of the stats; the limits it reads (runtime overrides applied) are also what GET /clusters
// prints.

import type { CircuitBreakerThresholds, ClusterConfig, RoutingPriority } from '../../config/model';
import type { RuntimeSource } from '../../runtime/live_runtime';
import { SharedCounts } from '../../stats/shared_counts';
import type { Gauge } from '../../stats/stats';
import type { SharedStatsStore } from '../../stats/store';
import { circuitBreakersName, gaugeNames, PRIORITIES, RESOURCE_GAUGES } from '../shared/circuit_breaker_names';
import { RESOURCE_COUNT, type Resource, ResourceManager } from '../shared/resource_manager';

/** A circuit breaker's limits for one priority, as GET /clusters prints them. */
export interface ThresholdLimits {
  readonly maxConnections: number;
  readonly maxPendingRequests: number;
  readonly maxRequests: number;
  readonly maxRetries: number;
}

interface PriorityState {
  readonly name: string;
  readonly priority: RoutingPriority;
  readonly thresholds: CircuitBreakerThresholds;
  /**
   * Over the zero counts until some worker has made the shared ones; made at its first use, not
   * with the cluster (10,000 clusters' managers took 40 ms of the start).
   */
  manager: ResourceManager | null;
  live: boolean;
  /** Made once a value differs from the 0 the declared name shows. */
  gauges: Gauge[] | null;
}

interface ClusterState {
  readonly config: ClusterConfig;
  readonly priorities: readonly PriorityState[];
}

export class CircuitBreakerStats {
  private readonly clusters = new Map<string, ClusterState>();
  /** What a cluster no worker has used yet counts: nothing (the supervisor never writes to it). */
  private readonly zero = new SharedCounts(new Int32Array(RESOURCE_COUNT * 2), 0, RESOURCE_COUNT, 0);

  constructor(
    configs: readonly ClusterConfig[],
    private readonly store: SharedStatsStore,
    private readonly runtime: RuntimeSource,
  ) {
    for (const config of configs) this.add(config);
  }

  /** A cluster joins (CDS), or replaces the one of its name with its own limits. */
  add(config: ClusterConfig): void {
    this.clusters.set(config.name, {
      config,
      priorities: PRIORITIES.map((priority) => ({
        name: circuitBreakersName(config.statName, priority),
        priority,
        thresholds: config.circuitBreakers[priority],
        manager: null,
        live: false,
        gauges: null,
      })),
    });
  }

  /** A cluster left (CDS): its gauges are no longer set. */
  remove(name: string): void {
    this.clusters.delete(name);
  }

  /** Sets every gauge from the counts and limits now. */
  update(): void {
    for (const cluster of this.clusters.values()) {
      for (const state of cluster.priorities) {
        if (!state.live) {
          const counts = this.store.existingCells(state.name, RESOURCE_COUNT);
          if (counts !== null) {
            state.manager = this.manager(cluster.config, state.priority, counts);
            state.live = true;
          }
        }
        this.set(state, this.managerOf(cluster.config, state));
      }
    }
  }

  /** The limits in effect for `cluster` (runtime overrides applied); null for an unknown cluster. */
  thresholds(cluster: string): { default: ThresholdLimits; high: ThresholdLimits } | null {
    const state = this.clusters.get(cluster);
    if (state === undefined) return null;
    const limits = (priority: PriorityState): ThresholdLimits => {
      const manager = this.managerOf(state.config, priority);
      return {
        maxConnections: manager.connections.max(),
        maxPendingRequests: manager.pendingRequests.max(),
        maxRequests: manager.requests.max(),
        maxRetries: manager.retries.max(),
      };
    };
    return { default: limits(state.priorities[0]!), high: limits(state.priorities[1]!) };
  }

  private managerOf(config: ClusterConfig, state: PriorityState): ResourceManager {
    return (state.manager ??= this.manager(config, state.priority, this.zero));
  }

  private manager(config: ClusterConfig, priority: RoutingPriority, counts: SharedCounts): ResourceManager {
    return new ResourceManager(counts, config.circuitBreakers[priority], this.runtime, config.name, priority);
  }

  private set(state: PriorityState, manager: ResourceManager): void {
    const track = state.thresholds.trackRemaining;
    let gauges = state.gauges;
    if (gauges === null) {
      // Until a limit is reached, or remaining_* are tracked, every value is the declared 0.
      const anyOpen = RESOURCE_GAUGES.some(([resource]) => !manager[resource].canCreate());
      if (!anyOpen && !track) return;
      gauges = state.gauges = gaugeNames(state.thresholds).map((name) => this.store.gauge(`${state.name}.${name}`, 'never_import'));
    }
    let g = 0;
    for (const [resource] of RESOURCE_GAUGES) {
      const r: Resource = manager[resource];
      const max = r.max();
      const count = r.count();
      gauges[g++]!.set(count < max ? 0 : 1);
      if (track) gauges[g++]!.set(max > count ? max - count : 0);
    }
  }
}

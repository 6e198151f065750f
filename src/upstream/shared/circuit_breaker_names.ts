// The names of a cluster's circuit breakers in the stats region: the shared counts of its
// resources, which every worker counts into and the supervisor reads, and the `*_open` and
// `remaining_*` gauges that the supervisor sets and the workers declare (so /stats lists them
// at 0 from the start).

import type { CircuitBreakerThresholds, ClusterConfig, RoutingPriority } from '../../config/model';
import type { StatGroup } from '../../stats/name_table';
import { SlotFlag, StatKind } from '../../shared_memory/region_layout';
import type { ResourceManager } from './resource_manager';

/** Each resource with its `_open` and `remaining_` gauge names. */
export const RESOURCE_GAUGES = [
  ['connections', 'cx_open', 'remaining_cx'],
  ['connectionPools', 'cx_pool_open', 'remaining_cx_pools'],
  ['pendingRequests', 'rq_pending_open', 'remaining_pending'],
  ['requests', 'rq_open', 'remaining_rq'],
  ['retries', 'rq_retry_open', 'remaining_retries'],
] as const satisfies readonly (readonly [keyof ResourceManager, string, string])[];

export const PRIORITIES = ['DEFAULT', 'HIGH'] as const satisfies readonly RoutingPriority[];

/** `cluster.<stat_name>.circuit_breakers.<default|high>`, the scope of the gauges and the name of the shared counts. */
export function circuitBreakersName(statName: string, priority: RoutingPriority): string {
  return `cluster.${statName}.circuit_breakers.${priority === 'DEFAULT' ? 'default' : 'high'}`;
}

/** The gauges of one priority: `*_open`, and `remaining_*` when they are tracked. */
export function gaugeNames(thresholds: CircuitBreakerThresholds): string[] {
  return RESOURCE_GAUGES.flatMap(([, open, remaining]) => (thresholds.trackRemaining ? [open, remaining] : [open]));
}

/** The gauges of `config`'s cluster, under its `cluster.<stat_name>.`: /stats lists them at 0 from the start. */
export function circuitBreakerStatGroups(config: ClusterConfig): StatGroup[] {
  return PRIORITIES.map((priority) => ({
    scope: `circuit_breakers.${priority === 'DEFAULT' ? 'default' : 'high'}.`,
    names: gaugeNames(config.circuitBreakers[priority]),
    kind: StatKind.Gauge,
    flags: SlotFlag.NeverImport,
  }));
}

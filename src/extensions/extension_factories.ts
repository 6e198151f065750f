// What each category's runtime creates its extensions with, the registry's type
// (builtin_extensions.ts): the workers' categories (data_plane_factories.ts) and the
// supervisor's, whose factories discover a cluster's hosts, probe them, and send the stats.

import type { StatsSinkFactory } from '../stats/sinks/stats_sink';
import type { ClusterType } from '../upstream/supervisor/cluster_discovery';
import type { HealthCheckerFactory } from '../upstream/supervisor/health_check/health_checkers';
import type { DataPlaneFactories } from './data_plane_factories';

export interface ExtensionFactories extends DataPlaneFactories {
  /** The supervisor's discovery of a cluster's hosts. */
  'proxy.clusters': ClusterType;
  /** The supervisor's probes of one kind of active health check. */
  'proxy.health_checkers': HealthCheckerFactory;
  /** The supervisor's stats sinks, flushed every stats_flush_interval. */
  'proxy.stats_sinks': StatsSinkFactory;
}

// What each category's runtime creates its extensions with, the registry's type
// (builtin_extensions.ts): the workers' categories (data_plane_factories.ts) and the
// supervisor's, whose factories discover a cluster's hosts and probe them.

import type { ClusterType } from '../upstream/supervisor/cluster_discovery';
import type { HealthCheckerFactory } from '../upstream/supervisor/health_check/health_checkers';
import type { DataPlaneFactories } from './data_plane_factories';

export interface ExtensionFactories extends DataPlaneFactories {
  /** The supervisor's discovery of a cluster's hosts. */
  'proxy.clusters': ClusterType;
  /** The supervisor's probes of one kind of active health check. */
  'proxy.health_checkers': HealthCheckerFactory;
}

// The aggregate cluster (`proxy.clusters.aggregate`) in the supervisor: it has no hosts of its
// own, its workers' balancer picks among other clusters' hosts
// (src/upstream/worker/lb/aggregate_lb.ts), so it is initialized at once and its membership
// stays empty.

import type { ClusterDiscovery, ClusterType } from './cluster_discovery';
import { AGGREGATE_CLUSTER_TYPE } from '../shared/cluster_type';

class AggregateDiscovery implements ClusterDiscovery {
  readonly initialized = Promise.resolve();

  start(onHosts: Parameters<ClusterDiscovery['start']>[0]): void {
    onHosts([]);
  }

  close(): void {}
}

export const AGGREGATE_CLUSTER: ClusterType = {
  name: AGGREGATE_CLUSTER_TYPE,
  secondary: true,
  create: () => new AggregateDiscovery(),
};

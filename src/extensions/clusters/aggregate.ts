// proxy.clusters.aggregate (cluster_type): a cluster of other clusters, whose balancer picks
// among their hosts (src/upstream/supervisor/aggregate_cluster.ts,
// src/upstream/worker/lb/aggregate_lb.ts).

import type { ExtensionDescriptor } from '../../config/extension';
import { CONFIG_TYPES } from '../../config/names';
import { leaf } from '../../config/shape';
import { AGGREGATE_CLUSTER } from '../../upstream/supervisor/aggregate_cluster';
import type { ClusterType } from '../../upstream/supervisor/cluster_discovery';
import { AGGREGATE_CLUSTER_TYPE } from '../../upstream/shared/cluster_type';

export const AGGREGATE: ExtensionDescriptor<'proxy.clusters', ClusterType> = {
  category: 'proxy.clusters',
  name: AGGREGATE_CLUSTER_TYPE,
  configType: CONFIG_TYPES.aggregateCluster,
  shape: { fields: { clusters: leaf } },
  // The aggregate balancer reads `clusters` from the typed_config as it is.
  model: (config) => ({ name: AGGREGATE_CLUSTER_TYPE, typedConfig: config }),
  factory: AGGREGATE_CLUSTER,
};

// A route's weighted_clusters: the cluster of one request, as Envoy 1.16 picks it
// (RouteEntryImplBase::clusterEntry).

import type { WeightedCluster, WeightedClusters } from '../../config/model';
import type { Runtime } from '../../runtime/runtime';

/**
 * The entry whose interval [sum of the weights before it, that sum plus its weight) holds
 * `random % totalWeight`. Weights are read from the runtime per request. When runtime weights
 * add up to more than the total, the entry that crosses it takes the rest, as in Envoy; when
 * they add up to less, values past their sum go to the last entry (where Envoy would abort).
 */
export function pickWeightedCluster(weighted: WeightedClusters, runtime: Runtime, random: number): WeightedCluster {
  const clusters = weighted.clusters;
  const total = weighted.totalWeight;
  const selected = random % total;
  let end = 0;
  for (const cluster of clusters) {
    end += runtime.getInteger(cluster.runtimeKey, cluster.weight);
    if (selected < end || end >= total) return cluster;
  }
  return clusters[clusters.length - 1];
}

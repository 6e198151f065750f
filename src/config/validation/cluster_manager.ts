// The bootstrap's cluster_manager message: its local cluster must be one of the static clusters
// (Envoy's ClusterManagerImpl refuses the bootstrap otherwise). Pure.

import { FieldError } from '../errors';
import { JsonObject, messageField, stringField } from '../json';

/** @throws FieldError at cluster_manager.local_cluster_name naming a cluster that is not defined */
export function validateClusterManager(bootstrap: JsonObject, clusterNames: ReadonlySet<string>): void {
  const localCluster = stringField(messageField(bootstrap, 'cluster_manager') ?? {}, 'local_cluster_name');
  if (localCluster !== '' && !clusterNames.has(localCluster)) {
    throw new FieldError('cluster_manager.local_cluster_name', `local cluster '${localCluster}' must be defined`);
  }
}

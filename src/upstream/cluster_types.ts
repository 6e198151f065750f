// The registry of cluster types this build runs. The capability check, the extension registry
// (GET /server_info) and the cluster manager all read it: adding a type touches this list.
// A function, not a constant: EDS validates its resources with the capability check, which
// reads this registry, so building it at import would run into that cycle.

import type { ClusterType } from './cluster_discovery';
import { LOGICAL_DNS_CLUSTER, STRICT_DNS_CLUSTER } from './dns_cluster';
import { EDS_CLUSTER } from './eds_cluster';
import { ORIGINAL_DST_CLUSTER } from './original_dst_cluster';
import { STATIC_CLUSTER } from './static_cluster';

export function clusterTypes(): ReadonlyMap<string, ClusterType> {
  return new Map([STATIC_CLUSTER, STRICT_DNS_CLUSTER, LOGICAL_DNS_CLUSTER, EDS_CLUSTER, ORIGINAL_DST_CLUSTER].map((t) => [t.name, t]));
}

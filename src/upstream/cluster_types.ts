// The registry of cluster types this build runs: the discovery types by their `type` name and
// the custom types (cluster_type) by their extension name, one lookup for both (clusterTypeName).
// The capability check, validation, the extension registry (GET /server_info) and the cluster
// manager all read it: adding a type touches this list.
// A function, not a constant: EDS validates its resources with the capability check, which
// reads this registry, so building it at import would run into that cycle.

import { AGGREGATE_CLUSTER } from './aggregate_cluster';
import type { ClusterType } from './cluster_discovery';
import { LOGICAL_DNS_CLUSTER, STRICT_DNS_CLUSTER } from './dns_cluster';
import { EDS_CLUSTER } from './eds_cluster';
import { ORIGINAL_DST_CLUSTER } from './original_dst_cluster';
import { STATIC_CLUSTER } from './static_cluster';

export function clusterTypes(): ReadonlyMap<string, ClusterType> {
  return new Map([STATIC_CLUSTER, STRICT_DNS_CLUSTER, LOGICAL_DNS_CLUSTER, EDS_CLUSTER, ORIGINAL_DST_CLUSTER, AGGREGATE_CLUSTER].map((t) => [t.name, t]));
}

/** The `type` values this build runs. */
export function discoveryTypeNames(): string[] {
  return [...clusterTypes().values()].filter((t) => t.configType === undefined).map((t) => t.name);
}

/** The custom cluster types (cluster_type) this build runs, by extension name. */
export function customClusterTypes(): ClusterType[] {
  return [...clusterTypes().values()].filter((t) => t.configType !== undefined);
}

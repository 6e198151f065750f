// How both processes' registries key a cluster's type: the supervisor's cluster types (its
// discovery) and the workers' cluster-provided balancers.

/** The aggregate cluster's extension name (cluster_type), with no hosts of its own: a balancer over other clusters. */
export const AGGREGATE_CLUSTER_TYPE = 'proxy.clusters.aggregate';

/** A cluster's type for the registries: its custom cluster_type's name, else its discovery type. */
export function clusterTypeName(config: { readonly type: string; readonly clusterType: { readonly name: string } | null }): string {
  return config.clusterType?.name ?? config.type;
}

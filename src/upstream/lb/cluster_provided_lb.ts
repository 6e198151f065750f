// Balancers that a cluster type brings itself (lb_policy CLUSTER_PROVIDED), by the cluster type
// they belong to: ORIGINAL_DST's discovery type name, or a custom type's extension name. The
// worker's clusters read this registry; a type missing from it provides no balancer, and a
// CLUSTER_PROVIDED cluster of that type is refused as Envoy refuses it. Kept apart from the
// supervisor's cluster type registry so that workers load no discovery code (DNS, xDS).

import type { ClusterConfig } from '../../config/model';
import type { LoadBalancer } from './load_balancer';
import type { LoadBalancerParams } from './load_balancer_base';

/** What a cluster-provided balancer may use of the worker beyond its own cluster's hosts. */
export interface ClusterProvidedContext {
  readonly config: ClusterConfig;
}

export interface ClusterProvidedLoadBalancerFactory {
  /** The cluster type, as clusterTypeName names it. */
  readonly clusterType: string;
  create(params: LoadBalancerParams, context: ClusterProvidedContext): LoadBalancer;
}

/** A cluster's type for the registries: its custom cluster_type's name, else its discovery type. */
export function clusterTypeName(config: Pick<ClusterConfig, 'type' | 'clusterType'>): string {
  return config.clusterType?.name ?? config.type;
}

export function clusterProvidedBalancers(): ReadonlyMap<string, ClusterProvidedLoadBalancerFactory> {
  return new Map();
}

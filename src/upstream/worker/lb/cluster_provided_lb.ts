// Balancers that a cluster type brings itself (lb_policy CLUSTER_PROVIDED), by the cluster type
// they belong to: ORIGINAL_DST's discovery type name, or a custom type's extension name. The
// worker's clusters read this registry; a type missing from it provides no balancer, and a
// CLUSTER_PROVIDED cluster of that type is refused as Envoy refuses it. Kept apart from the
// supervisor's cluster type registry so that workers load no discovery code (DNS, xDS).

import type { Clock } from '../../../common/clock';
import type { ClusterConfig, SocketAddress } from '../../../config/model';
import type { Cluster } from '../cluster';
import type { Host } from '../host';
import { AGGREGATE_LOAD_BALANCER } from './aggregate_lb';
import type { LoadBalancer } from './load_balancer';
import type { LoadBalancerParams } from './load_balancer_base';
import { ORIGINAL_DST_LB } from './original_dst_lb';

/** What a cluster-provided balancer may use of the worker beyond its own cluster's hosts. */
export interface ClusterProvidedContext {
  readonly config: ClusterConfig;
  readonly clock: Clock;
  /**
   * The cluster's host at `address`: its member, else one made now that membership has not got
   * yet (an ORIGINAL_DST destination seen first), usable at once; the member that joins at that
   * address later takes it over, with its connections and statistics.
   */
  hostFor(address: SocketAddress): Host;
  /** Tells the supervisor the balancer picked these destinations (it makes or keeps their hosts). */
  reportPicked(addresses: readonly SocketAddress[]): void;
  /** The worker's other clusters (the aggregate's children). */
  readonly clusters: ClusterLookup;
}

/** The worker's clusters by name, as CDS changes them (Envoy's ThreadLocalClusterManager and its update callbacks). */
export interface ClusterLookup {
  get(name: string): Cluster | undefined;
  /**
   * Calls `listener` after the cluster of a name joined, was replaced or left.
   * @returns the listener's removal
   */
  watch(listener: (name: string) => void): () => void;
}

export interface ClusterProvidedLoadBalancerFactory {
  /** The cluster type, as clusterTypeName names it. */
  readonly clusterType: string;
  /** A balancer ready to pick from `params.prioritySet` as it is now (refreshed once). */
  create(params: LoadBalancerParams, context: ClusterProvidedContext): LoadBalancer;
}

export const CLUSTER_PROVIDED_BALANCERS: ReadonlyMap<string, ClusterProvidedLoadBalancerFactory> = new Map(
  [ORIGINAL_DST_LB, AGGREGATE_LOAD_BALANCER].map((factory) => [factory.clusterType, factory]),
);

// The aggregate cluster's balancer (Envoy's AggregateClusterLoadBalancer): the priorities of the
// listed clusters, in list order, make one priority list, whose load is split by health like any
// cluster's priorities (so traffic fails over from the first cluster to the next as its hosts go
// unhealthy); the chosen child's own balancer then picks a host at the chosen priority. A listed
// cluster that does not exist (yet) is skipped: CDS may add it later, and the list follows.

import { type JsonObject, stringList } from '../../../config/json';
import { AGGREGATE_CLUSTER_TYPE } from '../../shared/cluster_type';
import type { Cluster } from '../cluster';
import type { Host } from '../host';
import type { ClusterLookup, ClusterProvidedLoadBalancerFactory } from './cluster_provided_lb';
import type { ForcedPriority, LoadBalancer, LoadBalancerContext } from './load_balancer';
import { healthyPanicThreshold, hostCounts, type LoadBalancerParams } from './load_balancer_base';
import type { MetadataMatchCriteria } from '../../../config/metadata_match';
import { choosePriority, computePriorityLoad, type HostCounts, type PriorityLoad } from './priority_load';
import type { DownstreamAddresses } from '../../../network/downstream_addresses';

/** One priority of the aggregate: a child's priority that has hosts. */
interface LinearizedPriority {
  readonly cluster: Cluster;
  /** Made once per refresh, so that a pick allocates only its context. */
  readonly healthy: ForcedPriority;
  readonly degraded: ForcedPriority;
}

/** A child followed for its membership changes. */
interface FollowedChild {
  readonly cluster: Cluster;
  readonly stop: () => void;
}

export class AggregateLoadBalancer implements LoadBalancer {
  private priorities: readonly LinearizedPriority[] = [];
  /** Null while no child has a host. */
  private load: PriorityLoad | null = null;
  private owners = new Map<Host, Cluster>();
  private readonly followed = new Map<string, FollowedChild>();
  private readonly stopWatching: () => void;

  constructor(
    /** The clusters in priority order (typed_config `clusters`). */
    private readonly children: readonly string[],
    private readonly params: LoadBalancerParams,
    private readonly clusters: ClusterLookup,
  ) {
    this.stopWatching = clusters.watch((name) => {
      if (children.includes(name)) this.refresh();
    });
  }

  chooseHost(context: LoadBalancerContext | null): Host | null {
    const load = this.load;
    if (load === null) return null;
    const { priority, availability } = choosePriority(load, this.params.random());
    const chosen = this.priorities[priority];
    return chosen.cluster.chooseHost(new AggregateContext(context, availability === 'healthy' ? chosen.healthy : chosen.degraded));
  }

  /** Follows the children as they are now (CDS may have added, replaced or removed one), then relinearizes. */
  refresh(): void {
    for (const [name, child] of this.followed) {
      if (this.clusters.get(name) === child.cluster) continue;
      child.stop();
      this.followed.delete(name);
    }
    for (const name of this.children) {
      const cluster = this.clusters.get(name);
      if (cluster === undefined || this.followed.has(name)) continue;
      this.followed.set(name, { cluster, stop: cluster.prioritySet.onUpdate(() => this.linearize()) });
    }
    this.linearize();
  }

  hostCluster(host: Host): Cluster {
    const owner = this.owners.get(host);
    // The router and tcp_proxy ask right after the pick, before any membership change.
    if (owner === undefined) throw new Error(`host ${host.addressString} is in no child of aggregate cluster '${this.params.info.name}'`);
    return owner;
  }

  close(): void {
    this.stopWatching();
    for (const child of this.followed.values()) child.stop();
    this.followed.clear();
  }

  /** Envoy's linearizePrioritySet: [C0.P0, C0.P1, C1.P0, ...], leaving out priorities without hosts. */
  private linearize(): void {
    const priorities: LinearizedPriority[] = [];
    const counts: HostCounts[] = [];
    const owners = new Map<Host, Cluster>();
    for (const name of this.children) {
      const cluster = this.followed.get(name)?.cluster;
      if (cluster === undefined) continue;
      for (const hostSet of cluster.prioritySet.hostSetsPerPriority) {
        if (hostSet.hosts.length === 0) continue;
        const priority = hostSet.priority;
        priorities.push({ cluster, healthy: { priority, availability: 'healthy' }, degraded: { priority, availability: 'degraded' } });
        counts.push(hostCounts(hostSet));
        for (const host of hostSet.hosts) owners.set(host, cluster);
      }
    }
    this.priorities = priorities;
    this.owners = owners;
    this.load = priorities.length === 0 ? null : computePriorityLoad(counts, healthyPanicThreshold(this.params.runtime, this.params.commonLbConfig));
  }
}

/** The caller's context, with the child's priority and availability chosen (Envoy's AggregateLoadBalancerContext). */
class AggregateContext implements LoadBalancerContext {
  constructor(
    private readonly inner: LoadBalancerContext | null,
    readonly forcedPriority: ForcedPriority,
  ) {}

  get hashKey(): bigint | null {
    return this.inner === null ? null : this.inner.hashKey;
  }

  get metadataMatch(): MetadataMatchCriteria | null {
    return this.inner === null ? null : this.inner.metadataMatch;
  }

  get downstream(): DownstreamAddresses | null {
    return this.inner === null ? null : this.inner.downstream;
  }

  get hostSelectionRetryCount(): number {
    return this.inner === null ? 0 : this.inner.hostSelectionRetryCount;
  }

  shouldSelectAnotherHost(host: Host): boolean {
    return this.inner !== null && this.inner.shouldSelectAnotherHost(host);
  }
}

export const AGGREGATE_LOAD_BALANCER: ClusterProvidedLoadBalancerFactory = {
  clusterType: AGGREGATE_CLUSTER_TYPE,
  // The typed_config is decoded JSON, its type checked by validation (a ClusterConfig).
  create: (params, context) => {
    const lb = new AggregateLoadBalancer(stringList((context.config.clusterType?.typedConfig ?? {}) as JsonObject, 'clusters'), params, context.clusters);
    lb.refresh();
    return lb;
  },
};

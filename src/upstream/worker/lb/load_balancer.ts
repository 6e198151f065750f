// What the router and tcp_proxy ask of a cluster's load balancer (Envoy's LoadBalancer and
// LoadBalancerContext, include/envoy/upstream/load_balancer.h).

import type { RequestHead } from '../../../http/message';
import type { Cluster } from '../cluster';
import type { Host } from '../host';
import type { DownstreamAddresses } from '../../../network/downstream_addresses';
import type { MetadataMatchCriteria } from '../../../config/metadata_match';
import type { Availability } from './priority_load';

/**
 * What the caller knows about the request or connection a host is picked for. Computed once
 * per attempt by the caller; balancers only read it.
 */
export interface LoadBalancerContext {
  /** The route's hash policies' 64-bit result; null when none applies (hashing balancers draw one). */
  readonly hashKey: bigint | null;
  /** The route's `proxy.lb` metadata_match merged with the weighted cluster's; null when neither has one. */
  readonly metadataMatch: MetadataMatchCriteria | null;
  /** The downstream connection's addresses; null when there is none (health checks). */
  readonly downstream: DownstreamAddresses | null;
  /** The request's headers (Envoy's downstreamHeaders); null or absent for a connection (tcp_proxy). */
  readonly downstreamHeaders?: RequestHead | null;
  /** How many extra picks a balancer may make while shouldSelectAnotherHost refuses its pick. */
  readonly hostSelectionRetryCount: number;
  /** True for a host the caller would rather not use (one an earlier attempt already tried). */
  shouldSelectAnotherHost(host: Host): boolean;
  /**
   * The priority and availability the pick must use, set by an aggregate cluster that chose them
   * over its children's priorities (Envoy's AggregateLoadBalancerContext); absent otherwise.
   */
  readonly forcedPriority?: ForcedPriority;
}

export interface ForcedPriority {
  readonly priority: number;
  readonly availability: Availability;
}

export interface LoadBalancer {
  /** The host for the next request or connection; null when there is none to use. */
  chooseHost(context: LoadBalancerContext | null): Host | null;
  /** Rebuilds the balancer's state after the priority set's membership or health changed. */
  refresh(): void;
  /**
   * For a balancer that picks other clusters' hosts (aggregate): the worker's cluster that owns
   * `host`, whose pools and statistics serve it. Absent for a balancer of the cluster's own hosts.
   */
  hostCluster?(host: Host): Cluster;
  /** The cluster left the worker's set: stop following anything outside it. */
  close?(): void;
}

/** A pick with nothing to hash, no metadata to match and no host to avoid: one small object per request, no closure. */
class ConnectionContext implements LoadBalancerContext {
  readonly hashKey = null;
  readonly metadataMatch = null;
  readonly hostSelectionRetryCount = 0;

  constructor(
    readonly downstream: DownstreamAddresses | null,
    readonly downstreamHeaders: RequestHead | null,
  ) {}

  shouldSelectAnotherHost(): boolean {
    return false;
  }
}

/** The context of a pick with nothing to hash, no metadata to match and no host to avoid. */
export function connectionContext(downstream: DownstreamAddresses | null, downstreamHeaders: RequestHead | null = null): LoadBalancerContext {
  return new ConnectionContext(downstream, downstreamHeaders);
}

/** The same context asking for `metadataMatch` instead (Envoy's LoadBalancerContextWrapper). */
export function withMetadataMatch(context: LoadBalancerContext, metadataMatch: MetadataMatchCriteria | null): LoadBalancerContext {
  return {
    hashKey: context.hashKey,
    metadataMatch,
    downstream: context.downstream,
    downstreamHeaders: context.downstreamHeaders ?? null,
    hostSelectionRetryCount: context.hostSelectionRetryCount,
    shouldSelectAnotherHost: (host) => context.shouldSelectAnotherHost(host),
    forcedPriority: context.forcedPriority,
  };
}

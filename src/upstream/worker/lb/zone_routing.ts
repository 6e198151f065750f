// Zone-aware routing's plan for priority 0 (Envoy's ZoneAwareLoadBalancerBase): how much traffic
// may stay in the local locality, and how the rest spreads over the localities with spare
// capacity, from each locality's share of healthy hosts in the local cluster and upstream.
// Pure: host sets in, a plan out; shares in 1/10000, in integers, as Envoy computes them.

import type { HostSet, HostsPerLocality } from '../priority_set';

/** Envoy's runtime gate of zone-aware routing, against zone_aware_lb_config.routing_enabled. */
export const ZONE_ROUTING_ENABLED_KEY = 'upstream.zone_routing.enabled';
/** Envoy's runtime override of zone_aware_lb_config.min_cluster_size. */
export const ZONE_ROUTING_MIN_CLUSTER_SIZE_KEY = 'upstream.zone_routing.min_cluster_size';

/** The counter a refresh bumps when it finds zone-aware routing impossible. */
export type ZoneRoutingSkipCounter = 'lb_local_cluster_not_ok' | 'lb_zone_number_differs' | 'lb_zone_cluster_too_small';

export type LocalityRouting =
  /** Picks ignore localities; `counter` says why, when Envoy counts it. */
  | { readonly kind: 'none'; readonly counter: ZoneRoutingSkipCounter | null }
  /** The local locality has at least its share of upstream hosts: it takes every pick. */
  | { readonly kind: 'direct' }
  | {
      readonly kind: 'residual';
      /** Out of 10000: the picks the local locality takes. */
      readonly localPercentToRoute: number;
      /** Cumulative spare capacity of each locality (0 for the local one), for sampling the others. */
      readonly residualCapacity: readonly number[];
    };

const NO_ROUTING: LocalityRouting = { kind: 'none', counter: null };

/**
 * The plan for `upstream` (the balanced cluster's priority 0) seen from `local` (the local
 * cluster's priority 0). Localities are matched by index: both lists put the local locality
 * first, then the others in the same order.
 */
export function planLocalityRouting(upstream: HostSet, local: HostSet, minClusterSize: number): LocalityRouting {
  const healthy = upstream.healthyHostsPerLocality;
  if (healthy.hosts.length < 2) return NO_ROUTING;
  if (!healthy.hasLocalLocality || healthy.hosts[0].length === 0) return { kind: 'none', counter: 'lb_local_cluster_not_ok' };
  if (healthy.hosts.length !== local.healthyHostsPerLocality.hosts.length) return { kind: 'none', counter: 'lb_zone_number_differs' };
  if (upstream.healthyHosts.length < minClusterSize) return { kind: 'none', counter: 'lb_zone_cluster_too_small' };

  const localShare = localityShares(local.healthyHostsPerLocality);
  const upstreamShare = localityShares(healthy);
  if (upstreamShare[0] >= localShare[0]) return { kind: 'direct' };

  const residualCapacity = [0];
  for (let i = 1; i < upstreamShare.length; i++) {
    const spare = upstreamShare[i] > localShare[i] ? upstreamShare[i] - localShare[i] : 0;
    residualCapacity.push(residualCapacity[i - 1] + spare);
  }
  return { kind: 'residual', localPercentToRoute: Math.floor((upstreamShare[0] * 10000) / localShare[0]), residualCapacity };
}

/** Each locality's share of the hosts, in 1/10000, truncated. */
export function localityShares(hostsPerLocality: HostsPerLocality): number[] {
  const total = hostsPerLocality.hosts.reduce((sum, hosts) => sum + hosts.length, 0);
  return hostsPerLocality.hosts.map((hosts) => (total > 0 ? Math.floor((10000 * hosts.length) / total) : 0));
}

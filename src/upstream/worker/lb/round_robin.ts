// Envoy's ROUND_ROBIN load balancer (RoundRobinLoadBalancer over EdfLoadBalancerBase): among
// equally weighted hosts `hosts[rr_index++ % n]`, the index starting at the balancer's random
// seed, so workers do not march in step; among unequally weighted ones, the EDF schedule.

import type { Host } from '../host';
import { EdfLoadBalancerBase } from './edf_load_balancer';
import type { HostsSource } from './load_balancer_base';

export class RoundRobinLoadBalancer extends EdfLoadBalancerBase {
  /** By HostsSource.key; positions survive refreshes, as Envoy keeps rr_indexes_ across updates. */
  private readonly rrIndexes: number[] = [];

  protected hostWeight(host: Host): number {
    return host.weight;
  }

  protected unweightedHostPick(hosts: readonly Host[], source: HostsSource): Host {
    const key = source.key;
    const index = this.rrIndexes[key] ?? this.seed;
    this.rrIndexes[key] = index + 1;
    // Exact up to 2^53 picks: the index never wraps in practice, as Envoy's uint64 does not.
    return hosts[index % hosts.length];
  }
}

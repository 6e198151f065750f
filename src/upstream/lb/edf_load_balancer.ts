// The base of the balancers that pick among weighted hosts one request at a time (Envoy's
// EdfLoadBalancerBase): per host list, an EDF schedule when the hosts' weights differ, else
// the policy's own unweighted pick, which is cheaper.

import type { Host } from '../host';
import { EdfScheduler } from './edf_scheduler';
import type { LoadBalancerContext } from './load_balancer';
import { type HostsSource, LoadBalancerBase, type LoadBalancerParams } from './load_balancer_base';

/** A host list's EDF schedule, or null when its hosts weigh the same. */
interface SourceState {
  readonly edf: EdfScheduler<Host> | null;
}

const SOURCE_TYPES = ['all', 'healthy', 'degraded'] as const;

export abstract class EdfLoadBalancerBase extends LoadBalancerBase {
  /** A random number per balancer, so that workers do not pick in step. */
  protected readonly seed: number;
  /** By sourceKey. */
  private states: SourceState[] = [];
  /** Every pick lands in one host list: no random draw is needed to choose it. */
  private singleSource = false;

  constructor(params: LoadBalancerParams) {
    super(params);
    this.seed = params.random();
  }

  override refresh(): void {
    super.refresh();
    const states: SourceState[] = [];
    const add = (source: HostsSource) => (states[sourceKey(source)] = { edf: this.buildSchedule(this.hostSourceToHosts(source)) });
    this.prioritySet.hostSetsPerPriority.forEach((hostSet, priority) => {
      for (const type of SOURCE_TYPES) add({ priority, type });
      // Locality-weighted and zone-aware picks draw from one locality's hosts.
      hostSet.hostsPerLocality.localities.forEach((_, locality) => {
        add({ priority, type: 'locality_healthy', locality });
        add({ priority, type: 'locality_degraded', locality });
      });
    });
    this.states = states;
    const loads = [...this.priorityLoad.healthy, ...this.priorityLoad.degraded];
    this.singleSource = loads.filter((load) => load > 0).length === 1;
    this.onRefresh();
  }

  protected chooseHostOnce(_context: LoadBalancerContext | null): Host | null {
    const source = this.hostSourceToUse(this.singleSource ? 0 : this.random());
    if (source === null) return null;
    const edf = this.states[sourceKey(source)].edf;
    if (edf !== null) return edf.pickAndAdd((host) => this.hostWeight(host));
    const hosts = this.hostSourceToHosts(source);
    return hosts.length === 0 ? null : this.unweightedHostPick(hosts, source);
  }

  /** The weight a host is scheduled with now (least request lowers it with active requests). */
  protected abstract hostWeight(host: Host): number;

  /** The pick among `hosts` (non-empty) when their weights are equal. */
  protected abstract unweightedHostPick(hosts: readonly Host[], source: HostsSource): Host;

  /** Called after every refresh, for state of the subclass's own. */
  protected onRefresh(): void {}

  /** Pre-picked `seed % n` times so that each worker starts elsewhere in the schedule. */
  private buildSchedule(hosts: readonly Host[]): EdfScheduler<Host> | null {
    if (hosts.length < 2 || hosts.every((h) => h.weight === hosts[0].weight)) return null;
    const edf = new EdfScheduler<Host>();
    for (const host of hosts) edf.add(this.hostWeight(host), host);
    for (let i = 0; i < this.seed % hosts.length; i++) edf.pickAndAdd((host) => this.hostWeight(host));
    return edf;
  }
}

/**
 * A small number per host list, indexing the per-list state of every pick: Cantor's pairing of
 * the priority and the list's index within it, dense for the few priorities and localities of
 * real clusters whatever their counts.
 */
export function sourceKey(source: HostsSource): number {
  const list = listIndex(source);
  const n = source.priority + list;
  return (n * (n + 1)) / 2 + list;
}

/** The host list's index within its priority: all, healthy, degraded, then two per locality. */
function listIndex(source: HostsSource): number {
  switch (source.type) {
    case 'all':
      return 0;
    case 'healthy':
      return 1;
    case 'degraded':
      return 2;
    case 'locality_healthy':
      return 3 + 2 * source.locality;
    case 'locality_degraded':
      return 4 + 2 * source.locality;
  }
}

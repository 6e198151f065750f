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

export abstract class EdfLoadBalancerBase extends LoadBalancerBase {
  /** A random number per balancer, so that workers do not pick in step. */
  protected readonly seed: number;
  /** By HostsSource.key. */
  private states: SourceState[] = [];
  /** Made once: a closure per pick would allocate. */
  private readonly weightOf = (host: Host): number => this.hostWeight(host);

  constructor(params: LoadBalancerParams) {
    super(params);
    this.seed = params.random();
  }

  override refresh(): void {
    super.refresh();
    const states: SourceState[] = [];
    const add = (source: HostsSource) => (states[source.key] = { edf: this.buildSchedule(this.hostSourceToHosts(source)) });
    for (const sources of this.sources) {
      add(sources.all);
      add(sources.healthy);
      add(sources.degraded);
      // Locality-weighted and zone-aware picks draw from one locality's hosts.
      sources.localityHealthy.forEach(add);
      sources.localityDegraded.forEach(add);
    }
    this.states = states;
    this.onRefresh();
  }

  protected chooseHostOnce(context: LoadBalancerContext | null): Host | null {
    const source = this.hostSourceToUse(context);
    if (source === null) return null;
    const edf = this.states[source.key].edf;
    if (edf !== null) return edf.pickAndAdd(this.weightOf);
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
    for (let i = 0; i < this.seed % hosts.length; i++) edf.pickAndAdd(this.weightOf);
    return edf;
  }
}

// Envoy's ROUND_ROBIN load balancer (RoundRobinLoadBalancer over EdfLoadBalancerBase):
// - the priority and availability (healthy, degraded, or all hosts in panic) come first,
//   from the priority loads;
// - among equally weighted hosts, `hosts[rr_index++ % n]`, the index starting at a random
//   seed per balancer (per worker), so workers do not march in step;
// - among unequally weighted hosts, EDF with deadline `now + 1/weight`, pre-picked
//   `seed % n` times at build time for the same reason.

import type { Counter } from '../../stats/stats';
import type { Host } from '../host';
import type { HostSet, PrioritySet } from '../priority_set';
import { EdfScheduler } from './edf_scheduler';
import type { LoadBalancer, RandomSource } from './load_balancer';
import { choosePriority, computePriorityLoad, DEFAULT_HEALTHY_PANIC_THRESHOLD, type PriorityLoad } from './priority_load';

/** The hosts one pick draws from, with its round-robin position or its EDF schedule. */
class HostSource {
  private readonly edf: EdfScheduler<Host> | null = null;

  constructor(
    private readonly hosts: readonly Host[],
    private rrIndex: number,
    seed: number,
  ) {
    if (hosts.length > 1 && hosts.some((h) => h.weight !== hosts[0].weight)) {
      this.edf = new EdfScheduler<Host>();
      for (const host of hosts) this.edf.add(host.weight, host);
      for (let i = 0; i < seed % hosts.length; i++) this.edf.pickAndAdd(hostWeight);
    }
  }

  get index(): number {
    return this.rrIndex;
  }

  pick(): Host | null {
    if (this.edf !== null) return this.edf.pickAndAdd(hostWeight);
    const n = this.hosts.length;
    if (n === 0) return null;
    // Exact up to 2^53 picks: the index never wraps in practice, as Envoy's uint64 does not.
    return this.hosts[this.rrIndex++ % n];
  }
}

interface PrioritySources {
  readonly all: HostSource;
  readonly healthy: HostSource;
  readonly degraded: HostSource;
}

export interface RoundRobinOptions {
  readonly random: RandomSource;
  /** Counts picks made in panic (`cluster.<name>.lb_healthy_panic`). */
  readonly healthyPanic: Pick<Counter, 'inc'>;
  /** Percent; 0 disables panic. */
  readonly healthyPanicThreshold?: number;
}

export class RoundRobinLoadBalancer implements LoadBalancer {
  private readonly seed: number;
  private readonly random: RandomSource;
  private readonly healthyPanic: Pick<Counter, 'inc'>;
  private readonly panicThreshold: number;
  private sources: PrioritySources[] = [];
  private load!: PriorityLoad;
  /** Set when every pick lands on the same source, so no random draw is needed. */
  private onlySource: HostSource | null = null;
  private onlySourceInPanic = false;

  constructor(
    private readonly prioritySet: PrioritySet,
    options: RoundRobinOptions,
  ) {
    this.random = options.random;
    this.healthyPanic = options.healthyPanic;
    this.panicThreshold = options.healthyPanicThreshold ?? DEFAULT_HEALTHY_PANIC_THRESHOLD;
    this.seed = options.random();
    this.refresh();
  }

  refresh(): void {
    const sets = this.prioritySet.hostSetsPerPriority;
    // Round-robin positions survive a refresh, as Envoy keeps rr_indexes_ across updates.
    this.sources = sets.map((set, priority) => this.sourcesFor(set, this.sources[priority]));
    this.load = computePriorityLoad(
      sets.map((s) => ({ hosts: s.hosts.length, healthy: s.healthyHosts.length, degraded: s.degradedHosts.length })),
      this.panicThreshold,
    );
    this.onlySource = null;
    const loaded = [...this.load.healthy, ...this.load.degraded].filter((l) => l > 0);
    if (loaded.length === 1) {
      const { priority, availability } = choosePriority(this.load, 0);
      this.onlySourceInPanic = this.load.panic[priority];
      this.onlySource = this.sourceFor(priority, availability);
    }
  }

  chooseHost(): Host | null {
    if (this.onlySource !== null) {
      if (this.onlySourceInPanic) this.healthyPanic.inc();
      return this.onlySource.pick();
    }
    const { priority, availability } = choosePriority(this.load, this.random());
    if (this.load.panic[priority]) this.healthyPanic.inc();
    return this.sourceFor(priority, availability).pick();
  }

  private sourceFor(priority: number, availability: 'healthy' | 'degraded'): HostSource {
    const sources = this.sources[priority];
    if (this.load.panic[priority]) return sources.all;
    return availability === 'healthy' ? sources.healthy : sources.degraded;
  }

  private sourcesFor(set: HostSet, previous: PrioritySources | undefined): PrioritySources {
    const seed = this.seed;
    return {
      all: new HostSource(set.hosts, previous?.all.index ?? seed, seed),
      healthy: new HostSource(set.healthyHosts, previous?.healthy.index ?? seed, seed),
      degraded: new HostSource(set.degradedHosts, previous?.degraded.index ?? seed, seed),
    };
  }
}

function hostWeight(host: Host): number {
  return host.weight;
}

// The part every load balancer shares (Envoy's LoadBalancerBase, load_balancer_impl.cc): which
// priority a pick goes to, whether that priority is in panic, and whether its healthy or its
// degraded hosts serve. Each policy implements only the pick among the hosts this leaves it.

import type { CommonLbConfig } from '../../../config/model';
import type { Logger } from '../../../log/logger_api';
import type { RuntimeSource } from '../../../runtime/live_runtime';
import type { ClusterInfo } from '../cluster_info';
import type { Host } from '../host';
import type { HostSet, PrioritySet } from '../priority_set';
import type { LoadBalancer, LoadBalancerContext } from './load_balancer';
import { LocalityScheduler } from './locality_scheduler';
import { type Availability, choosePriority, computePriorityLoad, type HostCounts, inPanic, type PriorityLoad } from './priority_load';
import { type LocalityRouting, planLocalityRouting, ZONE_ROUTING_ENABLED_KEY, ZONE_ROUTING_MIN_CLUSTER_SIZE_KEY } from './zone_routing';
import type { RandomSource } from '../../../common/random';

/** Envoy's runtime override of common_lb_config.healthy_panic_threshold. */
export const HEALTHY_PANIC_THRESHOLD_KEY = 'upstream.healthy_panic_threshold';

/** Everything a balancer is built from; the registry's factories take it whole. */
export interface LoadBalancerParams {
  readonly prioritySet: PrioritySet;
  /** The local cluster's hosts on this worker (cluster_manager.local_cluster_name), for zone-aware routing. */
  readonly localPrioritySet: PrioritySet | null;
  /** The cluster's settings and stats (read lazily: a worker makes stat handles only for clusters it uses). */
  readonly info: ClusterInfo;
  readonly commonLbConfig: CommonLbConfig;
  readonly runtime: RuntimeSource;
  readonly random: RandomSource;
  /** The host's requests in flight over every worker (its rq_active gauge); 0 for a host without stats. */
  readonly activeRequests: (host: Host) => number;
  /** The `upstream` component's logger. */
  readonly log: Logger;
}

/** Which of a priority's host lists a pick draws from (Envoy's HostsSource). */
export type HostsSourceType = 'all' | 'healthy' | 'degraded' | 'locality_healthy' | 'locality_degraded';

/**
 * One host list of a priority. Made at refresh and reused by every pick, so a pick allocates
 * nothing; `key` is a small number, stable across refreshes, indexing per-list state.
 */
export type HostsSource =
  | { readonly priority: number; readonly type: 'all' | 'healthy' | 'degraded'; readonly key: number }
  | {
      readonly priority: number;
      readonly type: 'locality_healthy' | 'locality_degraded';
      /** The index in the priority's hostsPerLocality. */
      readonly locality: number;
      readonly key: number;
    };

/** A priority's host lists, as picks name them. */
export interface PrioritySources {
  readonly all: HostsSource;
  readonly healthy: HostsSource;
  readonly degraded: HostsSource;
  /** Per locality, parallel to hostsPerLocality. */
  readonly localityHealthy: readonly HostsSource[];
  readonly localityDegraded: readonly HostsSource[];
}

/** A priority's locality schedules (locality_weighted_lb_config), one per availability. */
interface LocalitySchedulers {
  readonly healthy: LocalityScheduler | null;
  readonly degraded: LocalityScheduler | null;
}

const NO_LOCALITY_ROUTING: LocalityRouting = { kind: 'none', counter: null };

export abstract class LoadBalancerBase implements LoadBalancer {
  protected readonly prioritySet: PrioritySet;
  protected readonly info: ClusterInfo;
  protected readonly runtime: RuntimeSource;
  protected readonly random: RandomSource;
  protected readonly commonLbConfig: CommonLbConfig;
  protected priorityLoad!: PriorityLoad;
  /** By priority: every host list a pick may draw from. */
  protected sources: readonly PrioritySources[] = [];
  private readonly localPrioritySet: PrioritySet | null;
  /**
   * Set when every pick lands in the same host list with no locality choice: the common case
   * (one healthy priority) then draws no random number and computes nothing.
   */
  private fixedSource: HostsSource | null = null;
  /** More than one host list has load: choosing the priority takes a random draw. */
  private loadIsSplit = false;
  /** By priority; null without locality_weighted_lb_config. */
  private localitySchedulers: readonly LocalitySchedulers[] | null = null;
  /** Zone-aware routing's plan for priority 0 (the only one it applies to, as in Envoy). */
  private localityRouting: LocalityRouting = NO_LOCALITY_ROUTING;

  constructor(params: LoadBalancerParams) {
    this.prioritySet = params.prioritySet;
    this.localPrioritySet = params.localPrioritySet;
    this.info = params.info;
    this.runtime = params.runtime;
    this.random = params.random;
    this.commonLbConfig = params.commonLbConfig;
    // The local cluster's membership decides the plan as much as this cluster's does, and the
    // plan decides whether picks may skip the choice of a host list.
    params.localPrioritySet?.onUpdate(() => {
      this.regenerateLocalityRouting();
      this.fixedSource = this.findFixedSource();
    });
  }

  /**
   * Picks, and picks again while the context refuses the host, up to its retry count; the
   * last pick stands even if refused, as in Envoy.
   */
  chooseHost(context: LoadBalancerContext | null): Host | null {
    const attempts = context === null ? 1 : context.hostSelectionRetryCount + 1;
    let host: Host | null = null;
    for (let attempt = 0; attempt < attempts; attempt++) {
      host = this.chooseHostOnce(context, attempt);
      if (host === null || context === null || !context.shouldSelectAnotherHost(host)) return host;
    }
    return host;
  }

  /**
   * Recomputes the priority loads and panic states from the priority set. Subclasses that
   * keep per-host state call this first, then rebuild theirs. Runtime overrides of the panic
   * threshold take effect here, at the next membership or health change, as in Envoy.
   */
  refresh(): void {
    const hostSets = this.prioritySet.hostSetsPerPriority;
    this.priorityLoad = computePriorityLoad(hostSets.map(hostCounts), this.panicThreshold());
    this.sources = hostSets.map(prioritySources);
    if (this.commonLbConfig.localityWeighted) {
      this.localitySchedulers = hostSets.map((set) => ({
        healthy: LocalityScheduler.build(set, set.healthyHostsPerLocality),
        degraded: LocalityScheduler.build(set, set.degradedHostsPerLocality),
      }));
    }
    if (this.localPrioritySet !== null) this.regenerateLocalityRouting();
    this.fixedSource = this.findFixedSource();
  }

  /** The policy's own pick; `attempt` counts from 0 within one chooseHost. */
  protected abstract chooseHostOnce(context: LoadBalancerContext | null, attempt: number): Host | null;

  /** The priority and availability for `hash` (Envoy's chooseHostSet). */
  protected chooseHostSet(hash: number): { hostSet: HostSet; availability: Availability } {
    const { priority, availability } = choosePriority(this.priorityLoad, hash);
    return { hostSet: this.prioritySet.hostSetsPerPriority[priority], availability };
  }

  /**
   * The host list the next pick draws from: all of a priority in panic (counted in
   * lb_healthy_panic), else its healthy or degraded ones, or one locality's of them. Null when
   * panic must fail the request instead (zone_aware_lb_config.fail_traffic_on_panic). The
   * priority takes a random draw only when the load is split between host lists.
   */
  protected hostSourceToUse(context: LoadBalancerContext | null): HostsSource | null {
    const forced = context === null ? undefined : context.forcedPriority;
    const fixed = this.fixedSource;
    if (fixed !== null && forced === undefined) {
      if (fixed.type !== 'all') return fixed;
      this.info.stats.counters.lb_healthy_panic.inc();
      return this.commonLbConfig.zoneAware.failTrafficOnPanic ? null : fixed;
    }
    const { priority, availability } = forced ?? choosePriority(this.priorityLoad, this.loadIsSplit ? this.random() : 0);
    const sources = this.sources[priority];
    // An aggregate chose from this cluster's priorities as they were at its last refresh; both refresh together.
    if (sources === undefined) return null;
    if (this.priorityLoad.panic[priority]) {
      this.info.stats.counters.lb_healthy_panic.inc();
      if (this.commonLbConfig.zoneAware.failTrafficOnPanic) return null;
      return sources.all;
    }
    if (this.localitySchedulers !== null) {
      const schedulers = this.localitySchedulers[priority];
      const scheduler = availability === 'healthy' ? schedulers.healthy : schedulers.degraded;
      if (scheduler !== null) return localitySource(sources, availability, scheduler.pick());
    }
    if (priority !== 0 || this.localityRouting.kind === 'none') return availability === 'healthy' ? sources.healthy : sources.degraded;
    return this.zoneAwareSource(availability);
  }

  protected hostSourceToHosts(source: HostsSource): readonly Host[] {
    const hostSet = this.prioritySet.hostSetsPerPriority[source.priority];
    switch (source.type) {
      case 'all':
        return hostSet.hosts;
      case 'healthy':
        return hostSet.healthyHosts;
      case 'degraded':
        return hostSet.degradedHosts;
      case 'locality_healthy':
        return hostSet.healthyHostsPerLocality.hosts[source.locality];
      case 'locality_degraded':
        return hostSet.degradedHostsPerLocality.hosts[source.locality];
    }
  }

  /** The host list every pick lands in, when there is exactly one and no locality is chosen per pick. */
  private findFixedSource(): HostsSource | null {
    const { healthy, degraded, panic } = this.priorityLoad;
    const loaded = [...healthy.map((load, p) => ({ load, p, availability: 'healthy' as const })), ...degraded.map((load, p) => ({ load, p, availability: 'degraded' as const }))].filter(
      (entry) => entry.load > 0,
    );
    this.loadIsSplit = loaded.length !== 1;
    if (this.loadIsSplit) return null;
    const { p, availability } = loaded[0];
    const sources = this.sources[p];
    if (panic[p]) return sources.all;
    if (this.localitySchedulers !== null) {
      const schedulers = this.localitySchedulers[p];
      if ((availability === 'healthy' ? schedulers.healthy : schedulers.degraded) !== null) return null;
    }
    if (p === 0 && this.localityRouting.kind !== 'none') return null;
    return availability === 'healthy' ? sources.healthy : sources.degraded;
  }

  private panicThreshold(): number {
    return healthyPanicThreshold(this.runtime, this.commonLbConfig);
  }

  /** Recomputes zone-aware routing's plan after this cluster's or the local cluster's membership changed. */
  private regenerateLocalityRouting(): void {
    const counters = this.info.stats.counters;
    counters.lb_recalculate_zone_structures.inc();
    const minClusterSize = this.runtime.snapshot().getInteger(ZONE_ROUTING_MIN_CLUSTER_SIZE_KEY, this.commonLbConfig.zoneAware.minClusterSize);
    this.localityRouting = planLocalityRouting(this.prioritySet.hostSetsPerPriority[0], this.localHostSet(), minClusterSize);
    if (this.localityRouting.kind === 'none' && this.localityRouting.counter !== null) counters[this.localityRouting.counter].inc();
  }

  /** A priority 0 pick under a zone-aware plan (Envoy's hostSourceToUse past its locality checks). */
  private zoneAwareSource(availability: Availability): HostsSource | null {
    const { routingEnabled, failTrafficOnPanic } = this.commonLbConfig.zoneAware;
    const sources = this.sources[0];
    const whole = availability === 'healthy' ? sources.healthy : sources.degraded;
    if (!this.runtime.snapshot().featureEnabled(ZONE_ROUTING_ENABLED_KEY, { numerator: routingEnabled, denominator: 'HUNDRED' }, this.random())) {
      return whole;
    }
    if (inPanic(hostCounts(this.localHostSet()), this.panicThreshold())) {
      // The local proxies are in panic: their localities say nothing of where traffic comes from.
      this.info.stats.counters.lb_local_cluster_not_ok.inc();
      return failTrafficOnPanic ? null : whole;
    }
    return localitySource(sources, availability, this.chooseRoutedLocality());
  }

  /** The locality of a zone-aware pick (Envoy's tryChooseLocalLocalityHosts). */
  private chooseRoutedLocality(): number {
    const plan = this.localityRouting;
    const counters = this.info.stats.counters;
    if (plan.kind !== 'residual') {
      counters.lb_zone_routing_all_directly.inc();
      return 0;
    }
    if (this.random() % 10000 < plan.localPercentToRoute) {
      counters.lb_zone_routing_sampled.inc();
      return 0;
    }
    counters.lb_zone_routing_cross_zone.inc();
    const capacity = plan.residualCapacity;
    const total = capacity[capacity.length - 1];
    if (total === 0) {
      // Only rounding of the shares leaves no spare capacity anywhere: any locality will do.
      counters.lb_zone_no_capacity_left.inc();
      return this.random() % capacity.length;
    }
    const threshold = this.random() % total;
    let i = 0;
    while (threshold > capacity[i]) i++;
    return i;
  }

  private localHostSet(): HostSet {
    // Only called with a local priority set (see the constructor and refresh).
    return this.localPrioritySet!.hostSetsPerPriority[0];
  }
}

function localitySource(sources: PrioritySources, availability: Availability, locality: number): HostsSource {
  return (availability === 'healthy' ? sources.localityHealthy : sources.localityDegraded)[locality];
}

function prioritySources(hostSet: HostSet, priority: number): PrioritySources {
  const localities = hostSet.hostsPerLocality.localities;
  return {
    all: { priority, type: 'all', key: sourceKey(priority, 0) },
    healthy: { priority, type: 'healthy', key: sourceKey(priority, 1) },
    degraded: { priority, type: 'degraded', key: sourceKey(priority, 2) },
    localityHealthy: localities.map((_, locality) => ({ priority, type: 'locality_healthy', locality, key: sourceKey(priority, 3 + 2 * locality) })),
    localityDegraded: localities.map((_, locality) => ({ priority, type: 'locality_degraded', locality, key: sourceKey(priority, 4 + 2 * locality) })),
  };
}

/**
 * Cantor's pairing of the priority and the list's index within it (all, healthy, degraded,
 * then two per locality): dense for the few priorities and localities of real clusters.
 */
function sourceKey(priority: number, list: number): number {
  const n = priority + list;
  return (n * (n + 1)) / 2 + list;
}

/** common_lb_config.healthy_panic_threshold, or its runtime override, capped at 100. */
export function healthyPanicThreshold(runtime: RuntimeSource, commonLbConfig: CommonLbConfig): number {
  return Math.min(100, runtime.snapshot().getInteger(HEALTHY_PANIC_THRESHOLD_KEY, commonLbConfig.healthyPanicThreshold));
}

export function hostCounts(set: HostSet): HostCounts {
  return {
    hosts: set.hosts.length,
    healthy: set.healthyHosts.length,
    degraded: set.degradedHosts.length,
    excluded: set.excludedHosts.length,
    overprovisioningFactor: set.overprovisioningFactor,
  };
}

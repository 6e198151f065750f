// The part every load balancer shares (Envoy's LoadBalancerBase, load_balancer_impl.cc): which
// priority a pick goes to, whether that priority is in panic, and whether its healthy or its
// degraded hosts serve. Each policy implements only the pick among the hosts this leaves it.

import type { CommonLbConfig } from '../../config/model';
import type { Logger } from '../../log/logger_api';
import type { RuntimeSource } from '../../runtime/live_runtime';
import type { ClusterInfo } from '../cluster_info';
import type { Host } from '../host';
import type { HostSet, PrioritySet } from '../priority_set';
import type { LoadBalancer, LoadBalancerContext, RandomSource } from './load_balancer';
import { type Availability, choosePriority, computePriorityLoad, type PriorityLoad } from './priority_load';

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
export type HostsSourceType = 'all' | 'healthy' | 'degraded';

export interface HostsSource {
  readonly priority: number;
  readonly type: HostsSourceType;
}

export abstract class LoadBalancerBase implements LoadBalancer {
  protected readonly prioritySet: PrioritySet;
  protected readonly info: ClusterInfo;
  protected readonly runtime: RuntimeSource;
  protected readonly random: RandomSource;
  protected readonly commonLbConfig: CommonLbConfig;
  protected priorityLoad!: PriorityLoad;

  constructor(params: LoadBalancerParams) {
    this.prioritySet = params.prioritySet;
    this.info = params.info;
    this.runtime = params.runtime;
    this.random = params.random;
    this.commonLbConfig = params.commonLbConfig;
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
    const threshold = Math.min(100, this.runtime.snapshot().getInteger(HEALTHY_PANIC_THRESHOLD_KEY, this.commonLbConfig.healthyPanicThreshold));
    this.priorityLoad = computePriorityLoad(this.prioritySet.hostSetsPerPriority.map(hostCounts), threshold);
  }

  /** The policy's own pick; `attempt` counts from 0 within one chooseHost. */
  protected abstract chooseHostOnce(context: LoadBalancerContext | null, attempt: number): Host | null;

  /** The priority and availability for `hash` (Envoy's chooseHostSet). */
  protected chooseHostSet(hash: number): { hostSet: HostSet; availability: Availability } {
    const { priority, availability } = choosePriority(this.priorityLoad, hash);
    return { hostSet: this.prioritySet.hostSetsPerPriority[priority], availability };
  }

  /**
   * The hosts a pick for `hash` draws from: all of a priority in panic (counted in
   * lb_healthy_panic), else its healthy or degraded ones. Null when panic must fail the
   * request instead (zone_aware_lb_config.fail_traffic_on_panic).
   */
  protected hostSourceToUse(hash: number): HostsSource | null {
    const { hostSet, availability } = this.chooseHostSet(hash);
    const priority = hostSet.priority;
    if (this.priorityLoad.panic[priority]) {
      this.info.stats.counters.lb_healthy_panic.inc();
      if (this.commonLbConfig.zoneAware.failTrafficOnPanic) return null;
      return { priority, type: 'all' };
    }
    return { priority, type: availability };
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
    }
  }
}

function hostCounts(set: HostSet): { hosts: number; healthy: number; degraded: number; excluded: number } {
  return { hosts: set.hosts.length, healthy: set.healthyHosts.length, degraded: set.degradedHosts.length, excluded: set.excludedHosts.length };
}

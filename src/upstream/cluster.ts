// A cluster as one worker sees it (Envoy's thread-local cluster): its current hosts by
// priority, its load balancer, and the connection pool and statistics of each host.
// Membership arrives as a ClusterLoadAssignment, first from the configuration and later from
// the supervisor; hosts that stay keep their Host object, and with it their pool.

import type { ClusterConfig, LocalityLbEndpoints } from '../config/model';
import { Http1ConnectionPool } from '../pool/http1_pool';
import { type ConnectionTarget, UpstreamConnection, type UpstreamConnectionCallbacks } from '../pool/upstream_connection';
import type { HostStats, StatsStore } from '../stats/stats';
import type { HostSlotAssignments } from '../server/worker_protocol';
import { hostSlotOf } from './host_slots';
import { ClusterInfo } from './cluster_info';
import { Host } from './host';
import type { LoadBalancer, RandomSource } from './lb/load_balancer';
import { RoundRobinLoadBalancer } from './lb/round_robin';
import { PrioritySet } from './priority_set';

/** A cluster whose discovery type or load balancing policy this worker cannot serve. */
export class UnsupportedClusterError extends Error {
  constructor(cluster: string, what: string) {
    super(`cluster '${cluster}': ${what} is not supported by the data plane`);
    this.name = 'UnsupportedClusterError';
  }
}

/** The per-host state a worker keeps beside the Host description. */
interface HostResources {
  readonly target: ConnectionTarget;
  pool: Http1ConnectionPool | null;
}

export class Cluster {
  readonly info: ClusterInfo;
  readonly prioritySet = new PrioritySet();
  private readonly lb: LoadBalancer;
  private readonly resources = new Map<Host, HostResources>();
  private hostsByAddress = new Map<string, Host>();

  /** `readBuffer`: the worker's scratch buffer for upstream reads (see ConnectionTarget). */
  constructor(
    config: ClusterConfig,
    private readonly store: StatsStore,
    private readonly hostSlots: HostSlotAssignments,
    random: RandomSource,
    private readonly readBuffer: Buffer,
  ) {
    if (config.type !== 'STATIC') throw new UnsupportedClusterError(config.name, `discovery type ${config.type}`);
    if (config.lbPolicy !== 'ROUND_ROBIN') throw new UnsupportedClusterError(config.name, `lb_policy ${config.lbPolicy}`);
    this.info = new ClusterInfo(config, store);
    this.lb = new RoundRobinLoadBalancer(this.prioritySet, {
      random,
      healthyPanic: { inc: () => this.info.stats.counters.lb_healthy_panic.inc() },
      healthyPanicThreshold: config.commonLbConfig.healthyPanicThreshold,
    });
    this.updateMembership(config.loadAssignment.endpoints);
  }

  chooseHost(): Host | null {
    return this.lb.chooseHost();
  }

  hostStats(host: Host): HostStats {
    return this.resourcesOf(host).target.hostStats;
  }

  httpPool(host: Host): Http1ConnectionPool {
    const resources = this.resourcesOf(host);
    if (resources.pool === null) resources.pool = new Http1ConnectionPool(resources.target);
    return resources.pool;
  }

  /** A raw TCP connection to `host` (tcp_proxy), accounted to this cluster and host. */
  tcpConnection(host: Host, callbacks: UpstreamConnectionCallbacks): UpstreamConnection {
    return new UpstreamConnection(this.resourcesOf(host).target, callbacks, { allowHalfOpen: true, http1: false });
  }

  /**
   * Replaces the membership (an EDS-equivalent assignment). Hosts are matched by address;
   * a removed host's pool drains: idle connections close, busy ones after their request.
   */
  updateMembership(endpoints: readonly LocalityLbEndpoints[]): void {
    const next = new Map<string, Host>();
    for (const group of endpoints) {
      for (const endpoint of group.lbEndpoints) {
        const candidate = Host.fromEndpoint(endpoint, group.priority, group.locality);
        const existing = this.hostsByAddress.get(candidate.addressString);
        if (existing === undefined) {
          next.set(candidate.addressString, candidate);
        } else {
          existing.updateFrom(endpoint, group.priority, group.locality);
          next.set(existing.addressString, existing);
        }
      }
    }
    for (const [address, host] of this.hostsByAddress) {
      if (next.has(address)) continue;
      this.resources.get(host)?.pool?.drain();
      this.resources.delete(host);
    }
    this.hostsByAddress = next;
    this.refreshHealth();
  }

  /** Re-reads every host's health flags (after a health checker or outlier detector changed them). */
  refreshHealth(): void {
    this.prioritySet.update([...this.hostsByAddress.values()]);
    this.lb.refresh();
  }

  /** Closes every upstream connection of this worker's pools. */
  close(): void {
    for (const resources of this.resources.values()) resources.pool?.close();
  }

  private resourcesOf(host: Host): HostResources {
    let resources = this.resources.get(host);
    if (resources === undefined) {
      const hostStats = this.store.hostStats(hostSlotOf(this.hostSlots, this.info.name, host.addressString));
      resources = { target: { host, hostStats, cluster: this.info, readBuffer: this.readBuffer }, pool: null };
      this.resources.set(host, resources);
    }
    return resources;
  }
}

// A cluster as one worker sees it (Envoy's thread-local cluster): its current hosts by
// priority, its load balancer, and the connection pool and statistics of each host.
// Membership comes from the supervisor, which owns it: a snapshot at start, then versioned
// updates. Hosts that stay keep their Host object, and with it their pool.

import type { ClusterConfig } from '../config/model';
import { Http1ConnectionPool } from '../pool/http1_pool';
import { type ConnectionTarget, UpstreamConnection, type UpstreamConnectionCallbacks } from '../pool/upstream_connection';
import type { HostStats, StatsStore } from '../stats/stats';
import { ClusterInfo } from './cluster_info';
import { Host } from './host';
import type { LoadBalancer, RandomSource } from './lb/load_balancer';
import { RoundRobinLoadBalancer } from './lb/round_robin';
import { type ClusterSnapshot, hostKey, type MembershipUpdate } from './membership';
import { PrioritySet } from './priority_set';

/** A cluster whose discovery type or load balancing policy this worker cannot serve. */
export class UnsupportedClusterError extends Error {
  constructor(cluster: string, what: string) {
    super(`cluster '${cluster}': ${what} is not supported by the data plane`);
    this.name = 'UnsupportedClusterError';
  }
}

/** An update made for another version than this worker's: applying it would lose changes. */
export class MembershipVersionError extends Error {
  constructor(cluster: string, have: number, update: MembershipUpdate) {
    super(`cluster '${cluster}': membership update ${update.baseVersion} -> ${update.version} does not apply to version ${have}`);
    this.name = 'MembershipVersionError';
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
  private version = 0;

  /** `readBuffer`: the worker's scratch buffer for upstream reads (see ConnectionTarget). */
  constructor(
    config: ClusterConfig,
    snapshot: ClusterSnapshot,
    private readonly store: StatsStore,
    random: RandomSource,
    private readonly readBuffer: Buffer,
  ) {
    if (config.lbPolicy !== 'ROUND_ROBIN') throw new UnsupportedClusterError(config.name, `lb_policy ${config.lbPolicy}`);
    this.info = new ClusterInfo(config, store);
    this.lb = new RoundRobinLoadBalancer(this.prioritySet, { random, healthyPanic: { inc: () => this.info.stats.counters.lb_healthy_panic.inc() } });
    this.applyMembership(snapshot.version, snapshot);
  }

  /** The membership version this worker serves. */
  get membershipVersion(): number {
    return this.version;
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
   * Takes the supervisor's next membership. Hosts are matched by address; a removed host's
   * pool drains: idle connections close, busy ones after their request.
   * @throws MembershipVersionError when the update was made for another version
   */
  update(update: MembershipUpdate): void {
    if (update.baseVersion !== this.version) throw new MembershipVersionError(this.info.name, this.version, update);
    this.applyMembership(update.version, update);
  }

  private applyMembership(version: number, membership: Pick<ClusterSnapshot, 'hosts'>): void {
    const next = new Map<string, Host>();
    for (const member of membership.hosts) {
      const key = hostKey(member);
      const existing = this.hostsByAddress.get(key);
      if (existing === undefined) {
        next.set(key, Host.fromMember(member));
      } else {
        existing.updateFrom(member);
        next.set(key, existing);
      }
    }
    for (const [address, host] of this.hostsByAddress) {
      if (next.has(address)) continue;
      this.resources.get(host)?.pool?.drain();
      this.resources.delete(host);
    }
    this.hostsByAddress = next;
    this.version = version;
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
      // Every member host has its slot; a Host made elsewhere (tests of the balancers) has none.
      if (host.slot === null) throw new Error(`host ${host.addressString} of cluster '${this.info.name}' has no stats slot`);
      const hostStats = this.store.hostStats(host.slot);
      resources = { target: { host, hostStats, cluster: this.info, readBuffer: this.readBuffer }, pool: null };
      this.resources.set(host, resources);
    }
    return resources;
  }
}

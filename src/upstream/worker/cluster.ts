// A cluster as one worker sees it (Envoy's thread-local cluster): its current hosts by
// priority, its load balancer, and the connection pool and statistics of each host.
// Membership comes from the supervisor, which owns it: a snapshot at start, then versioned
// updates. Hosts that stay keep their Host object, and with it their pool.

import { FieldError } from '../../config/errors';
import type { ClusterConfig, FractionalPercent, Locality, OutlierDetection, RoutingPriority, SocketAddress } from '../../config/model';
import type { ConnectionPool, HttpProtocol } from '../../http/codec';
import { Http1ConnectionPool } from '../../pool/http1_pool';
import { Http2ConnectionPool } from '../../pool/http2_pool';
import { type ConnectionTarget, UpstreamConnection, type UpstreamConnectionCallbacks } from '../../pool/upstream_connection';
import type { UpstreamConnectionLogs } from '../../log/connection_log';
import type { Logger } from '../../log/logger_api';
import type { HostSlot, HostStats, StatReader, StatsStore } from '../../stats/stats';
import { ClusterInfo } from './cluster_info';
import { HealthFlag } from '../shared/health_flags';
import { Host } from './host';
import type { RuntimeSource } from '../../runtime/live_runtime';
import type { LoadBalancer, LoadBalancerContext } from './lb/load_balancer';
import type { LoadBalancerParams } from './lb/load_balancer_base';
import { type ClusterLookup, type ClusterProvidedContext, CLUSTER_PROVIDED_BALANCERS } from './lb/cluster_provided_lb';
import { clusterTypeName } from '../shared/cluster_type';
import { LOAD_BALANCERS } from './lb/load_balancer_registry';
import { SubsetLoadBalancer } from './lb/subset_load_balancer';
import { type ClusterSnapshot, destinationHost, hostKey, type MemberHost, type MembershipPolicy, type MembershipUpdate } from '../shared/membership';
import { addressString } from '../../network/socket_address';
import type { Clock } from '../../common/clock';
import { PendingHostStats } from '../../stats/pending_host_stats';
import type { ConsecutiveFailure } from '../shared/outlier/consecutive_failure';
import { NO_OUTLIER_MONITOR } from './outlier/host_monitor';
import { SharedHostMonitor } from './outlier/shared_host_monitor';
import { PrioritySet } from './priority_set';
import type { DownstreamAddresses } from '../../network/downstream_addresses';
import type { RandomSource } from '../../common/random';
import type { SecretSource } from '../../tls/secret_store';
import type { WriteBatch } from '../../network/write_batch';

/** An update made for another version than this worker's: applying it would lose changes. */
export class MembershipVersionError extends Error {
  constructor(cluster: string, have: number, update: MembershipUpdate) {
    super(`cluster '${cluster}': membership update ${update.baseVersion} -> ${update.version} does not apply to version ${have}`);
    this.name = 'MembershipVersionError';
  }
}

/**
 * A pool per routing priority and protocol, as Envoy keeps them: each priority counts against its
 * own circuit breakers; HTTP/2 pools exist beside HTTP/1 ones with protocol_selection USE_DOWNSTREAM_PROTOCOL.
 */
interface PriorityPools {
  DEFAULT: ConnectionPool | null;
  HIGH: ConnectionPool | null;
  DEFAULT_HTTP2: ConnectionPool | null;
  HIGH_HTTP2: ConnectionPool | null;
  /**
   * Pools whose connections were opened with transport socket options (auto_sni), by the
   * options' key: as Envoy keys pools by their hash, a connection serves one SNI only.
   */
  byOptions: Map<string, PriorityPools> | null;
}

const POOL_KEYS = ['DEFAULT', 'HIGH', 'DEFAULT_HTTP2', 'HIGH_HTTP2'] as const;
type PoolKey = (typeof POOL_KEYS)[number];

function emptyPools(): PriorityPools {
  return { DEFAULT: null, HIGH: null, DEFAULT_HTTP2: null, HIGH_HTTP2: null, byOptions: null };
}

/** The per-host state a worker keeps beside the Host description. */
interface HostResources {
  readonly target: ConnectionTarget;
  readonly pools: PriorityPools;
  /** With downstream-specific connections (ClusterInfo), pools per downstream connection instead. */
  downstreamPools: Map<DownstreamAddresses, PriorityPools> | null;
  /** The host's rq_active over every worker, as the balancer reads it. */
  activeRequests: StatReader;
  /** A host made before membership had it (see hostFor): its statistics until its slot comes. */
  pendingStats: PendingHostStats | null;
  /** tcp_proxy's connections to the host, kept only for close_connections_on_host_health_failure. */
  tcpConnections: Set<UpstreamConnection> | null;
  /** `target` with each transport socket options in use (see PriorityPools.byOptions), by key. */
  optionTargets: Map<string, ConnectionTarget> | null;
}

/** What a worker's clusters share. */
export interface ClusterEnvironment {
  readonly store: StatsStore;
  readonly runtime: RuntimeSource;
  readonly random: RandomSource;
  /** The worker's scratch buffer for upstream reads (see ConnectionTarget). */
  readonly readBuffer: Buffer;
  /** The node's locality (after --service-zone), listed first in every cluster; null when it has none. */
  readonly localLocality: Locality | null;
  /**
   * This worker reports what every worker would compute alike, once for all: the hashing
   * balancers' table gauges (see ClusterInfo) and the transport socket match counts.
   */
  readonly reportsTables: boolean;
  /** The `upstream` component's logger. */
  readonly log: Logger;
  /** The worker's upstream connection loggers and ids. */
  readonly connectionLogs: UpstreamConnectionLogs;
  /** A consecutive failure run of a host reached its threshold: the supervisor's detector ejects it. */
  readonly onConsecutiveFailure: (cluster: string, host: HostSlot, failure: ConsecutiveFailure) => void;
  /** The worker's clusters, for balancers over other clusters (aggregate); a cluster made alone sees none. */
  readonly clusters?: ClusterLookup;
  /** A cluster-provided balancer picked these destinations (ORIGINAL_DST): the supervisor makes or keeps their hosts. */
  readonly onHostsPicked: (cluster: string, addresses: readonly SocketAddress[]) => void;
  /** Times what a cluster-provided balancer batches (ORIGINAL_DST's pick reports). */
  readonly clock: Clock;
  /** Where upstream connections' small writes wait for the end of the event loop's turn (see ConnectionTarget); none: they go at once. */
  readonly writeBatch?: WriteBatch | null;
  /** The secrets the clusters' TLS contexts name (static_resources.secrets, SDS). */
  readonly secrets: SecretSource;
}

const NO_CLUSTERS: ClusterLookup = { get: () => undefined, watch: () => () => undefined };

export class Cluster {
  readonly info: ClusterInfo;
  readonly prioritySet: PrioritySet;
  private readonly lb: LoadBalancer;
  /** An aggregate's: the child whose host its balancer picked, which serves it. Null for a cluster of its own hosts. */
  private readonly hostOwner: ((host: Host) => Cluster) | null;
  private readonly resources = new Map<Host, HostResources>();
  private hostsByAddress = new Map<string, Host>();
  /** Hosts hostFor made that membership has not brought yet, by address. */
  private readonly pendingHosts = new Map<string, Host>();
  private version = 0;
  /** The membership's load assignment policy. */
  private policy: MembershipPolicy;

  private readonly store: StatsStore;
  private readonly readBuffer: Buffer;
  private readonly environment: ClusterEnvironment;
  private readonly outlierDetection: OutlierDetection | null;

  /**
   * `localPrioritySet`: the local cluster's hosts on this worker (cluster_manager.local_cluster_name),
   * for zone-aware routing; null for the local cluster itself and when there is none.
   * @throws FieldError at `lb_policy` (relative to the cluster) for a policy this build lacks
   */
  constructor(config: ClusterConfig, snapshot: ClusterSnapshot, environment: ClusterEnvironment, localPrioritySet: PrioritySet | null = null) {
    this.prioritySet = new PrioritySet(environment.localLocality);
    this.store = environment.store;
    this.readBuffer = environment.readBuffer;
    this.environment = environment;
    this.outlierDetection = config.outlierDetection;
    this.info = new ClusterInfo(config, environment.store, environment.runtime, environment.log, environment.secrets, environment.reportsTables);
    // The discovery type is the supervisor's business: a worker only ever sees membership.
    const params: LoadBalancerParams = {
      prioritySet: this.prioritySet,
      localPrioritySet,
      info: this.info,
      commonLbConfig: config.commonLbConfig,
      runtime: environment.runtime,
      random: environment.random,
      // rq_active is shared by the workers: least request sees the requests of all of them, as in Envoy.
      activeRequests: (host) => (host.slot === null ? 0 : this.resourcesOf(host).activeRequests.value()),
      log: environment.log,
    };
    // The first membership goes into the priority set before the balancer is made: making it
    // computes the balancer's state over the set, which a refresh after would compute again.
    this.policy = snapshot.policy;
    this.adoptMembership(snapshot.version, snapshot);
    this.updatePrioritySet();
    const lb = (this.lb = createLoadBalancer(config, params, {
      config,
      clock: environment.clock,
      hostFor: (address) => this.hostFor(address),
      reportPicked: (addresses) => environment.onHostsPicked(config.name, addresses),
      clusters: environment.clusters ?? NO_CLUSTERS,
    }));
    this.hostOwner = lb.hostCluster === undefined ? null : (host) => lb.hostCluster!(host);
  }

  /** The share of requests the router drops before picking a host (drop_overloads); null: none. */
  get dropOverload(): FractionalPercent | null {
    return this.policy.dropOverload;
  }

  /** The membership version this worker serves. */
  get membershipVersion(): number {
    return this.version;
  }

  chooseHost(context: LoadBalancerContext | null): Host | null {
    return this.lb.chooseHost(context);
  }

  /** The cluster whose pools, circuit breakers and statistics serve `host`: this one, or an aggregate's child. */
  hostCluster(host: Host): Cluster {
    return this.hostOwner === null ? this : this.hostOwner(host);
  }

  /**
   * The host at `address`: the member, else a host made now, outside the priority set, until
   * membership brings one at that address, which then becomes this very Host (ClusterProvidedContext).
   */
  private hostFor(address: SocketAddress): Host {
    const key = addressString(address);
    const member = this.hostsByAddress.get(key);
    if (member !== undefined) return member;
    let host = this.pendingHosts.get(key);
    if (host === undefined) {
      host = new Host(address.address, address.port, destinationHost(this.info.name, address));
      this.pendingHosts.set(key, host);
    }
    return host;
  }

  hostStats(host: Host): HostStats {
    if (this.hostOwner !== null) return this.hostOwner(host).hostStats(host);
    return this.resourcesOf(host).target.hostStats;
  }

  /**
   * The pool for requests of `downstream` to `host` at `priority`, speaking what protocol_selection
   * picks for a downstream of `protocol`, whose host header upstream is `authority` (auto_sni picks
   * the connection's SNI from it); null when max_connection_pools allows no new one and no idle
   * pool of the host can be freed for it (upstream_cx_pool_overflow).
   */
  httpPool(host: Host, downstream: DownstreamAddresses, priority: RoutingPriority, protocol: HttpProtocol, authority = ''): ConnectionPool | null {
    if (this.hostOwner !== null) return this.hostOwner(host).httpPool(host, downstream, priority, protocol, authority);
    const resources = this.resourcesOf(host);
    let pools = resources.pools;
    let target = resources.target;
    if (this.info.downstreamSpecificConnections) {
      const byDownstream = (resources.downstreamPools ??= new Map());
      let own = byDownstream.get(downstream);
      if (own === undefined) {
        own = emptyPools();
        byDownstream.set(downstream, own);
      }
      pools = own;
    }
    const options = this.info.transportSocketOptions(authority);
    if (options !== null) {
      const byOptions = (pools.byOptions ??= new Map());
      let own = byOptions.get(options.key);
      if (own === undefined) {
        own = emptyPools();
        byOptions.set(options.key, own);
      }
      pools = own;
      const targets = (resources.optionTargets ??= new Map());
      target = targets.get(options.key) ?? { ...resources.target, transportSocketOptions: options };
      targets.set(options.key, target);
    }
    const http2 = this.info.upstreamProtocol(protocol) === 'http2';
    const key: PoolKey = http2 ? (priority === 'HIGH' ? 'HIGH_HTTP2' : 'DEFAULT_HTTP2') : priority;
    const existing = pools[key];
    if (existing !== null) return existing;
    const manager = this.info.resourceManager(priority);
    if (!manager.connectionPools.tryAcquire() && !(freeIdlePool(resources, key) && manager.connectionPools.tryAcquire())) {
      this.info.stats.counters.upstream_cx_pool_overflow.inc();
      return null;
    }
    return (pools[key] = http2 ? new Http2ConnectionPool(target, manager) : new Http1ConnectionPool(target, manager));
  }

  /** `downstream` closed: the pools kept for it alone drain (see httpPool). */
  releaseDownstream(downstream: DownstreamAddresses): void {
    for (const resources of this.resources.values()) {
      const pools = resources.downstreamPools?.get(downstream);
      if (pools === undefined) continue;
      drainPriorityPools(pools);
      resources.downstreamPools!.delete(downstream);
    }
  }

  /** A raw TCP connection to `host` (tcp_proxy) for `downstream`, accounted to this cluster and host. */
  tcpConnection(host: Host, callbacks: UpstreamConnectionCallbacks, downstream: DownstreamAddresses): UpstreamConnection {
    if (this.hostOwner !== null) return this.hostOwner(host).tcpConnection(host, callbacks, downstream);
    const resources = this.resourcesOf(host);
    const connection = new UpstreamConnection(resources.target, callbacks, { allowHalfOpen: true, http1: false }, downstream, this.environment.connectionLogs.ids.nextConnection());
    if (this.info.closeConnectionsOnHostHealthFailure) {
      const open = (resources.tcpConnections ??= new Set());
      open.add(connection);
      connection.socket.once('close', () => open.delete(connection));
    }
    return connection;
  }

  /**
   * Takes the supervisor's next membership. Hosts are matched by address; a removed host's
   * pool drains: idle connections close, busy ones after their request. With
   * close_connections_on_host_set_change, a host added or removed drains every pool, and
   * requests after it get new connections.
   * @throws MembershipVersionError when the update was made for another version
   */
  update(update: MembershipUpdate): void {
    if (update.baseVersion !== this.version) throw new MembershipVersionError(this.info.name, this.version, update);
    this.applyMembership(update.version, update);
  }

  private applyMembership(version: number, membership: Pick<ClusterSnapshot, 'hosts' | 'policy'>): void {
    const hostSetChanged = this.adoptMembership(version, membership);
    if (hostSetChanged && this.info.closeConnectionsOnHostSetChange) {
      for (const resources of this.resources.values()) drainPools(resources);
    }
    this.refreshHealth();
  }

  /** Makes `membership` this cluster's hosts, matched by address. @returns whether a host joined or left */
  private adoptMembership(version: number, membership: Pick<ClusterSnapshot, 'hosts' | 'policy'>): boolean {
    this.policy = membership.policy;
    const next = new Map<string, Host>();
    let added = false;
    for (const member of membership.hosts) {
      const key = hostKey(member);
      const existing = this.hostsByAddress.get(key);
      if (existing === undefined) {
        added = true;
        const host = this.adoptPendingHost(key, member) ?? Host.fromMember(member);
        this.attachOutlierMonitor(host);
        // Counted once per host, as Envoy does when it makes one: by the worker that reports for all.
        if (this.environment.reportsTables) this.info.transportSockets.countMatch(host);
        next.set(key, host);
      } else {
        const failedBefore = existing.healthFlags & HEALTH_FAILURE_FLAGS;
        existing.updateFrom(member);
        next.set(key, existing);
        if (this.info.closeConnectionsOnHostHealthFailure && (member.healthFlags & HEALTH_FAILURE_FLAGS & ~failedBefore) !== 0) {
          this.onHostHealthFailure(existing);
        }
      }
    }
    let removed = false;
    for (const [address, host] of this.hostsByAddress) {
      if (next.has(address)) continue;
      removed = true;
      // Its slot may already be another host's: requests still in flight report nowhere.
      host.outlier = NO_OUTLIER_MONITOR;
      const resources = this.resources.get(host);
      if (resources !== undefined) drainPools(resources);
      this.resources.delete(host);
    }
    this.hostsByAddress = next;
    this.version = version;
    return added || removed;
  }

  /** The host hostFor made at `key`, now the member `member`: its statistics move into the member's slot. */
  private adoptPendingHost(key: string, member: MemberHost): Host | null {
    const host = this.pendingHosts.get(key);
    if (host === undefined) return null;
    this.pendingHosts.delete(key);
    host.updateFrom(member);
    const resources = this.resources.get(host);
    if (resources?.pendingStats != null) {
      resources.pendingStats.settle(this.store.hostStats(member.slot));
      resources.pendingStats = null;
      resources.activeRequests = this.store.hostStatSum(member.slot, 'rq_active');
    }
    return host;
  }

  /**
   * A host just failed its health check or was ejected (Envoy's onHostHealthFailure, with
   * close_connections_on_host_health_failure): its HTTP pools drain, so that later requests get
   * new connections, and tcp_proxy's connections to it close at once.
   */
  private onHostHealthFailure(host: Host): void {
    const resources = this.resources.get(host);
    if (resources === undefined) return;
    drainPools(resources);
    if (resources.tcpConnections === null) return;
    for (const connection of resources.tcpConnections) connection.close();
  }

  /** With outlier_detection, the host's requests count in its shared record for the detector. */
  private attachOutlierMonitor(host: Host): void {
    const config = this.outlierDetection;
    const slot = host.slot;
    if (config === null || slot === null) return;
    const { words, index } = this.store.hostRecord(slot);
    const { environment } = this;
    const cluster = this.info.name;
    host.outlier = new SharedHostMonitor(words, index, config, environment.runtime, (failure) => environment.onConsecutiveFailure(cluster, slot, failure));
  }

  /** Re-reads every host's health flags (after a health checker or outlier detector changed them). */
  refreshHealth(): void {
    this.updatePrioritySet();
    this.lb.refresh();
  }

  private updatePrioritySet(): void {
    this.prioritySet.update([...this.hostsByAddress.values()], this.policy.overprovisioningFactor);
  }

  /**
   * The cluster left this worker's set (CDS removed or replaced it): every pool drains, so that
   * requests in flight finish on their connections, which then close; idle ones close now.
   */
  drain(): void {
    for (const resources of this.resources.values()) drainPools(resources);
    this.lb.close?.();
  }

  /** Closes every upstream connection of this worker's pools. */
  close(): void {
    for (const resources of this.resources.values()) {
      closePriorityPools(resources.pools);
      if (resources.downstreamPools === null) continue;
      for (const pools of resources.downstreamPools.values()) closePriorityPools(pools);
    }
  }

  private resourcesOf(host: Host): HostResources {
    let resources = this.resources.get(host);
    if (resources === undefined) {
      // Every member host has its slot, and hostFor's hosts count apart until theirs comes; a
      // Host made elsewhere (tests of the balancers) has none.
      const pendingStats = host.slot === null && this.pendingHosts.get(host.addressString) === host ? new PendingHostStats() : null;
      if (host.slot === null && pendingStats === null) throw new Error(`host ${host.addressString} of cluster '${this.info.name}' has no stats slot`);
      const hostStats = pendingStats ?? this.store.hostStats(host.slot!);
      resources = {
        target: { host, hostStats, cluster: this.info, readBuffer: this.readBuffer, connector: this.info.connectorFor(host), logs: this.environment.connectionLogs, clock: this.environment.clock, writeBatch: this.environment.writeBatch ?? null },
        pools: emptyPools(),
        downstreamPools: null,
        activeRequests: pendingStats?.rq_active ?? this.store.hostStatSum(host.slot!, 'rq_active'),
        pendingStats,
        tcpConnections: null,
        optionTargets: null,
      };
      this.resources.set(host, resources);
    }
    return resources;
  }
}

/** @throws FieldError at `lb_policy` for a policy, or a cluster-provided balancer, this build lacks */
function createLoadBalancer(config: ClusterConfig, params: LoadBalancerParams, context: ClusterProvidedContext): LoadBalancer {
  if (config.lbPolicy === 'CLUSTER_PROVIDED') {
    const provided = CLUSTER_PROVIDED_BALANCERS.get(clusterTypeName(config));
    if (provided === undefined) {
      throw new FieldError('lb_policy', `cluster manager: cluster provided LB specified but cluster '${config.name}' did not provide one. Check cluster documentation.`);
    }
    return provided.create(params, context);
  }
  const factory = LOAD_BALANCERS.get(config.lbPolicy);
  if (factory === undefined) throw new FieldError('lb_policy', `lb_policy ${config.lbPolicy} is not supported by the data plane`);
  // With lb_subset_config the policy runs inside each subset, under the subset balancer.
  return config.lbSubsetConfig === null ? factory.create(params) : new SubsetLoadBalancer(config.lbSubsetConfig, factory, params);
}

/** The verdicts that close a host's connections: an active health check's and outlier detection's. */
const HEALTH_FAILURE_FLAGS = HealthFlag.FAILED_ACTIVE_HC | HealthFlag.FAILED_OUTLIER_CHECK;

/** Every pool of a host drains and is forgotten: its connections close once idle. */
function drainPools(resources: HostResources): void {
  drainPriorityPools(resources.pools);
  if (resources.downstreamPools === null) return;
  for (const pools of resources.downstreamPools.values()) drainPriorityPools(pools);
  resources.downstreamPools = null;
}

function drainPriorityPools(pools: PriorityPools): void {
  for (const key of POOL_KEYS) {
    pools[key]?.drain();
    pools[key] = null;
  }
  if (pools.byOptions === null) return;
  for (const own of pools.byOptions.values()) drainPriorityPools(own);
  pools.byOptions = null;
}

function closePriorityPools(pools: PriorityPools): void {
  for (const key of POOL_KEYS) pools[key]?.close();
  if (pools.byOptions !== null) for (const own of pools.byOptions.values()) closePriorityPools(own);
}

/**
 * Envoy's ConnPoolMap::freeOnePool: at max_connection_pools, a pool of the host and priority
 * with no connection and no request is given up so that another may be made.
 */
function freeIdlePool(resources: HostResources, key: PoolKey): boolean {
  if (resources.downstreamPools === null) return false;
  for (const pools of resources.downstreamPools.values()) {
    const pool = pools[key];
    if (pool === null || !pool.idleForever) continue;
    pool.drain();
    pools[key] = null;
    return true;
  }
  return false;
}

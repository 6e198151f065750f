// The one owner of cluster membership (Envoy's main-thread ClusterManagerImpl): each cluster's
// type discovers its hosts here, in the supervisor; every change becomes a versioned
// MembershipUpdate for the workers, and the current snapshots are what a (re)started worker
// and GET /clusters read. Host slots in the stats region follow membership: a joining host
// gets one, a leaving host gives it back. Clusters that CDS adds at run time warm first (their
// discovery runs until its first result) and only then replace or join the active set.

import { isDeepStrictEqual } from 'node:util';
import type { JsonObject } from '../../config/json';
import type { ClusterConfig, LoadAssignmentPolicy, SocketAddress } from '../../config/model';
import type { Clock } from '../../common/clock';
import type { SubscriptionFactory } from '../../config/xds/subscription_factory';
import type { TlsContext } from '../../tls/tls_context';
import { type SecretSource, SecretStore } from '../../tls/secret_store';
import type { Logger, LoggerFactory } from '../../log/logger_api';
import type { RuntimeSource } from '../../runtime/live_runtime';
import type { HostTable } from '../../stats/host_table';
import type { Counter, Gauge, Scope, StatsStore } from '../../stats/stats';
import type { ClusterDiscovery, ClusterType } from './cluster_discovery';
import { EXCLUDING_FLAGS, HealthFlag, hostHealth } from '../shared/health_flags';
import { clusterTypeName } from '../shared/cluster_type';
import { applyUpdate, type ClusterSnapshot, diffMembership, type DiscoveredHost, emptySnapshot, hostKey, membershipPolicy, type MembershipUpdate } from '../shared/membership';
import { type MergeWindowStats, UpdateMergeWindow } from './update_merge_window';

/**
 * Clusters started between two turns of the event loop, so that admin answers during a large
 * start, and the workers' init (10 MB of bootstrap for 10,000 clusters) moves on: each turn
 * writes only what the channel's socket buffer takes.
 */
const START_BATCH = 50;
/**
 * How long the server waits for the clusters' first results, as Envoy's initial_fetch_timeout
 * (default 15 s) bounds a dynamic resource: a cluster still waiting then serves what it has
 * (nothing, at first) and takes its result when it comes.
 */
export const CLUSTER_INIT_TIMEOUT_MS = 15_000;

export class UnknownClusterTypeError extends Error {
  constructor(cluster: string, type: string) {
    super(`cluster '${cluster}': cluster type ${type} is not registered`);
    this.name = 'UnknownClusterTypeError';
  }
}

/**
 * Something in the supervisor that judges one cluster's hosts and sets its own health bits on
 * them (Envoy's active HealthChecker and outlier Detector). One per cluster, not per worker.
 */
export interface HealthSource {
  /** The bits every joining host starts with (FAILED_ACTIVE_HC for a health-checked cluster). */
  readonly newHostFlags: number;
  /** Settles once every initial host has its first verdict: cluster initialization waits for it. */
  readonly initialized: Promise<void>;
  /** The cluster's membership changed; `snapshot` already holds the change. */
  onMembership(snapshot: ClusterSnapshot, update: MembershipUpdate): void;
  /** Stops timers and closes connections. */
  close(): void;
}

export interface HealthSourceContext {
  readonly config: ClusterConfig;
  readonly clock: Clock;
  /** `upstream`. */
  readonly log: Logger;
  /** `hc`: each check's outcome. */
  readonly healthCheckLog: Logger;
  /** The cluster's stats scope (`cluster.<stat name>`). */
  readonly stats: Scope;
  readonly runtime: RuntimeSource;
  /** The host table, for state the workers share with the supervisor per host slot. */
  readonly hosts: HostTable;
  /** The cluster's current membership. */
  snapshot(): ClusterSnapshot;
  /** Has the supervisor reload TLS contexts the source made when their files change. */
  watchCertificates(contexts: readonly TlsContext[]): void;
  /** The secrets the cluster's TLS contexts name (static_resources.secrets, SDS). */
  readonly secrets: SecretSource;
  /**
   * Sets (`set`) or clears `bits` on the host keyed `key` (hostKey). A change is a membership
   * update, so it reaches every worker at its next pick. False when no such host is left.
   */
  setHealthFlags(key: string, bits: number, set: boolean): boolean;
}

/** Makes a cluster's health source, or null when its configuration asks for none. */
export interface HealthSourceFactory {
  create(context: HealthSourceContext): HealthSource | null;
}

export interface SupervisorClusterManagerDeps {
  readonly types: ReadonlyMap<string, ClusterType>;
  readonly hosts: HostTable;
  readonly stats: StatsStore;
  readonly log: LoggerFactory;
  readonly clock: Clock;
  readonly runtime: RuntimeSource;
  /** xDS subscriptions, for the cluster types that discover through one (EDS). */
  readonly subscriptions: SubscriptionFactory;
  /** Reloads TLS contexts (those health checks connect with) when their files change. */
  readonly certificates?: { add(contexts: readonly TlsContext[]): void };
  /** The secrets those TLS contexts name. Default: none, for clusters that name no secret. */
  readonly secrets?: SecretSource;
  /**
   * Settles once the SDS secrets a cluster's TLS contexts name have had their first update (or
   * its failure): a CDS cluster warms until then too, as Envoy's cluster init manager holds it.
   */
  readonly secretsInitialized?: (config: ClusterConfig) => Promise<void>;
  /** Health checking and outlier detection, asked once per cluster. */
  readonly healthSources?: readonly HealthSourceFactory[];
  /** Every membership change of an active cluster after start(), for the workers. */
  readonly onUpdate: (update: MembershipUpdate) => void;
  /** A CDS cluster finished warming and is now active (new, or replacing one of its name). */
  readonly onClusterActive?: (config: ClusterConfig, snapshot: ClusterSnapshot) => void;
  /** A CDS cluster left the active set. */
  readonly onClusterRemoved?: (name: string) => void;
  /** CLUSTER_INIT_TIMEOUT_MS unless a test says otherwise. */
  readonly initTimeoutMs?: number;
}

/** The supervisor-side statistics of one cluster's membership. */
interface MembershipStats {
  readonly change: Counter;
  readonly total: Gauge;
  readonly healthy: Gauge;
  readonly degraded: Gauge;
  readonly excluded: Gauge;
  readonly maxHostWeight: Gauge;
}

/** Where a CDS cluster came from, for /clusters and /config_dump. */
export interface DynamicClusterOrigin {
  /** The version_info of the update that added or last changed it. */
  readonly versionInfo: string;
  readonly lastUpdated: Date;
  /** The resource as loaded (v3 JSON, extension names canonical): changes are judged on it. */
  readonly source: JsonObject;
}

/** A CDS cluster as /config_dump lists it. */
export interface DynamicClusterState extends DynamicClusterOrigin {
  readonly name: string;
}

/** Envoy's cluster_manager.* statistics of the cluster set. */
interface ClusterSetStats {
  readonly added: Counter;
  readonly modified: Counter;
  readonly removed: Counter;
  readonly active: Gauge;
  readonly warming: Gauge;
}

interface ManagedCluster {
  readonly config: ClusterConfig;
  /** null for a cluster of the bootstrap. */
  readonly dynamic: DynamicClusterOrigin | null;
  /** In the workers' set: false while it warms. */
  active: boolean;
  /** Replaced or removed: its discovery and health results no longer count. */
  closed: boolean;
  readonly discovery: ClusterDiscovery;
  readonly healthSources: HealthSource[];
  /** The OR of the health sources' newHostFlags. */
  newHostFlags: number;
  snapshot: ClusterSnapshot;
  /** What the workers have: `snapshot` less the changes the merge window holds. */
  published: ClusterSnapshot;
  readonly mergeWindow: UpdateMergeWindow;
  /** Made at the first result: 10,000 static clusters should not cost handles they never change. */
  stats: MembershipStats | null;
}

export class SupervisorClusterManager {
  /** The active clusters, in the order they became active (static ones in configuration order). */
  private readonly clusters = new Map<string, ManagedCluster>();
  /** CDS clusters waiting for their first result, by name. */
  private readonly warming = new Map<string, ManagedCluster>();
  private readonly log: Logger;
  private readonly setStats: ClusterSetStats;
  private started = false;
  private closed = false;
  private mergeStats: MergeWindowStats | null = null;

  constructor(
    private readonly configs: readonly ClusterConfig[],
    private readonly deps: SupervisorClusterManagerDeps,
  ) {
    this.log = deps.log('upstream').forFile(__filename);
    const stats = deps.stats;
    this.setStats = {
      added: stats.counter('cluster_manager.cluster_added'),
      modified: stats.counter('cluster_manager.cluster_modified'),
      removed: stats.counter('cluster_manager.cluster_removed'),
      // Each epoch reports its own cluster set.
      active: stats.gauge('cluster_manager.active_clusters', 'never_import'),
      warming: stats.gauge('cluster_manager.warming_clusters', 'never_import'),
    };
  }

  /**
   * Creates every cluster and initializes them in Envoy's two phases: the primary clusters,
   * then `beforeSecondary` (the RTDS layers' first updates), then the secondary ones (EDS,
   * aggregate). Resolves once every cluster is initialized (its first result, or failure, is
   * in), as Envoy's init manager holds the server until then, or once each phase's
   * initialization timeout has passed.
   * @throws UnknownClusterTypeError for a type the registry lacks (the capability check refuses it first).
   */
  async initialize(beforeSecondary: () => Promise<void> = () => Promise.resolve()): Promise<void> {
    const primary: ManagedCluster[] = [];
    const secondary: ManagedCluster[] = [];
    for (let i = 0; i < this.configs.length; i++) {
      const managed = this.createCluster(this.configs[i]!, null);
      managed.active = true;
      this.clusters.set(managed.config.name, managed);
      (this.deps.types.get(clusterTypeName(managed.config))?.secondary === true ? secondary : primary).push(managed);
      if (i % START_BATCH === START_BATCH - 1) await new Promise((resolve) => setImmediate(resolve));
    }
    this.setStats.added.add(this.configs.length);
    this.updateSetStats();
    await this.initializePhase(primary);
    await beforeSecondary();
    await this.initializePhase(secondary);
    this.started = true;
  }

  /** Starts each cluster, a batch per turn of the event loop; settles once all are initialized or the timeout has passed. */
  private async initializePhase(clusters: readonly ManagedCluster[]): Promise<void> {
    const initialized: Promise<void>[] = [];
    for (let i = 0; i < clusters.length; i++) {
      initialized.push(this.startCluster(clusters[i]!));
      if (i % START_BATCH === START_BATCH - 1) await new Promise((resolve) => setImmediate(resolve));
    }
    await this.withinInitTimeout(Promise.all(initialized), () => clusters.filter((c) => c.snapshot.version === 0).map((c) => c.config.name));
  }

  /**
   * A cluster from CDS, new or changed: it warms (its discovery runs) and becomes active at its
   * first result or the initialization timeout, replacing the active one of its name only then.
   * `warmed` settles once it is active, or was replaced or removed before. `applied` is false,
   * with nothing done, for a configuration the cluster already has, and for the name of a static
   * cluster, which CDS never replaces (Envoy ignores such a resource).
   * @throws UnknownClusterTypeError (the capability check refuses the type first)
   */
  addOrUpdateCluster(config: ClusterConfig, origin: DynamicClusterOrigin): { applied: boolean; warmed: Promise<void> } {
    const name = config.name;
    const active = this.clusters.get(name);
    const warming = this.warming.get(name);
    const unchanged = { applied: false, warmed: Promise.resolve() };
    if (this.closed) return unchanged;
    if (active !== undefined && active.dynamic === null) {
      this.log.warn(`cds: cluster '${name}' is a static cluster; the CDS resource of that name is ignored`);
      return unchanged;
    }
    const latest = warming ?? active;
    if (latest !== undefined && isDeepStrictEqual(latest.dynamic!.source, origin.source)) return unchanged;
    if (warming !== undefined) {
      this.closeCluster(warming);
      this.warming.delete(name);
      // Back to what is active: nothing left to warm.
      if (active !== undefined && isDeepStrictEqual(active.dynamic!.source, origin.source)) {
        this.updateSetStats();
        return { applied: true, warmed: Promise.resolve() };
      }
    }
    if (latest === undefined) this.setStats.added.inc();
    else this.setStats.modified.inc();
    const managed = this.createCluster(config, origin);
    this.warming.set(name, managed);
    this.updateSetStats();
    const secrets = this.deps.secretsInitialized?.(config) ?? Promise.resolve();
    const warmed = this.withinInitTimeout(Promise.all([this.startCluster(managed), secrets]), () => (managed.closed ? null : [name])).then(
      () => this.activate(managed),
      (error: Error) => {
        this.log.warn(`cluster '${name}': initialization failed: ${error.message}`);
        this.activate(managed);
      },
    );
    return { applied: true, warmed };
  }

  /**
   * Removes a CDS cluster, warming or active: its discovery and health sources stop, its host
   * slots are given back, the workers drop it. False for a static or unknown cluster.
   */
  removeCluster(name: string): boolean {
    const active = this.clusters.get(name);
    const warming = this.warming.get(name);
    if ((active ?? warming)?.dynamic == null || this.closed) return false;
    if (warming !== undefined) {
      this.closeCluster(warming);
      this.warming.delete(name);
    }
    if (active !== undefined) {
      this.closeCluster(active);
      this.clusters.delete(name);
      // Its hosts are gone: the gauges say so rather than keep its last membership.
      if (active.stats !== null) for (const gauge of [active.stats.total, active.stats.healthy, active.stats.degraded, active.stats.excluded, active.stats.maxHostWeight]) gauge.set(0);
      this.deps.onClusterRemoved?.(name);
    }
    this.setStats.removed.inc();
    this.updateSetStats();
    return true;
  }

  /** The names of the active clusters, static or CDS (what an RDS route's validate_clusters checks). */
  activeClusterNames(): Set<string> {
    return new Set(this.clusters.keys());
  }

  /** The names of the CDS clusters, warming or active. */
  dynamicClusterNames(): Set<string> {
    const names = new Set(this.warming.keys());
    for (const cluster of this.clusters.values()) if (cluster.dynamic !== null) names.add(cluster.config.name);
    return names;
  }

  /** True for an active cluster CDS added. */
  addedViaApi(name: string): boolean {
    return (this.clusters.get(name)?.dynamic ?? null) !== null;
  }

  /** The active CDS clusters' configurations, for a worker (re)started now. */
  dynamicConfigs(): ClusterConfig[] {
    return [...this.clusters.values()].filter((c) => c.dynamic !== null).map((c) => c.config);
  }

  /** The CDS clusters, as /config_dump lists them. */
  dynamicClusters(): { active: DynamicClusterState[]; warming: DynamicClusterState[] } {
    const state = (c: ManagedCluster): DynamicClusterState[] => (c.dynamic === null ? [] : [{ name: c.config.name, ...c.dynamic }]);
    return { active: [...this.clusters.values()].flatMap(state), warming: [...this.warming.values()].flatMap(state) };
  }

  private createCluster(config: ClusterConfig, dynamic: DynamicClusterOrigin | null): ManagedCluster {
    const typeName = clusterTypeName(config);
    const type = this.deps.types.get(typeName);
    if (type === undefined) throw new UnknownClusterTypeError(config.name, typeName);
    const discovery = type.create(config, {
      log: this.deps.log('upstream'),
      stats: this.deps.stats.scope(`cluster.${config.statName}`),
      clock: this.deps.clock,
      subscriptions: this.deps.subscriptions,
    });
    const empty = emptySnapshot(config);
    const managed: ManagedCluster = {
      config,
      dynamic,
      active: false,
      closed: false,
      discovery,
      healthSources: [],
      newHostFlags: 0,
      snapshot: empty,
      published: empty,
      mergeWindow: new UpdateMergeWindow(config.commonLbConfig.updateMergeWindowMs, this.deps.clock, this.windowStats(), (update) => {
        managed.published = applyUpdate(update);
        this.deps.onUpdate(update);
      }),
      stats: null,
    };
    this.createHealthSources(managed);
    return managed;
  }

  /** Starts discovery; settles once the cluster is initialized. */
  private startCluster(managed: ManagedCluster): Promise<void> {
    managed.discovery.start((hosts, policy = managed.config.loadAssignment.policy) => this.onHosts(managed, hosts, policy));
    // A health-checked cluster is initialized once its first hosts have their first verdict.
    return managed.discovery.initialized.then(() => Promise.all(managed.healthSources.map((h) => h.initialized))).then(() => undefined);
  }

  /** A warmed CDS cluster takes its place in the active set, unless it was replaced or removed meanwhile. */
  private activate(managed: ManagedCluster): void {
    const name = managed.config.name;
    if (this.closed || this.warming.get(name) !== managed) return;
    this.warming.delete(name);
    const replaced = this.clusters.get(name);
    if (replaced !== undefined) this.closeCluster(replaced);
    managed.active = true;
    this.clusters.set(name, managed);
    this.updateSetStats();
    // The workers take it whole: later changes go through its merge window from here.
    managed.published = managed.snapshot;
    this.deps.onClusterActive?.(managed.config, managed.snapshot);
  }

  /** Stops a cluster's discovery and health sources and gives its host slots back. */
  private closeCluster(cluster: ManagedCluster): void {
    cluster.closed = true;
    cluster.active = false;
    cluster.discovery.close();
    cluster.mergeWindow.close();
    for (const source of cluster.healthSources) source.close();
    for (const host of cluster.snapshot.hosts) this.deps.hosts.free(host.slot);
  }

  private updateSetStats(): void {
    this.setStats.active.set(this.clusters.size);
    this.setStats.warming.set(this.warming.size);
  }

  /** The health sources of the cluster named `name` (none for an unknown one). */
  healthSources(name: string): readonly HealthSource[] {
    return this.clusters.get(name)?.healthSources ?? [];
  }

  private createHealthSources(cluster: ManagedCluster): void {
    const factories = this.deps.healthSources ?? [];
    if (factories.length === 0) return;
    const context: HealthSourceContext = {
      config: cluster.config,
      clock: this.deps.clock,
      log: this.deps.log('upstream'),
      healthCheckLog: this.deps.log('hc'),
      stats: this.deps.stats.scope(`cluster.${cluster.config.statName}`),
      runtime: this.deps.runtime,
      hosts: this.deps.hosts,
      snapshot: () => cluster.snapshot,
      watchCertificates: (contexts) => this.deps.certificates?.add(contexts),
      secrets: this.deps.secrets ?? new SecretStore([]),
      setHealthFlags: (key, bits, set) => this.setHealthFlags(cluster, key, bits, set),
    };
    for (const factory of factories) {
      const source = factory.create(context);
      if (source === null) continue;
      cluster.healthSources.push(source);
      cluster.newHostFlags |= source.newHostFlags;
    }
  }

  private withinInitTimeout(initialized: Promise<unknown>, waitingFor: () => string[] | null): Promise<void> {
    const { clock, initTimeoutMs = CLUSTER_INIT_TIMEOUT_MS } = this.deps;
    return new Promise<void>((resolve, reject) => {
      const timer = clock.setTimeout(() => {
        // null: a warming cluster replaced or removed meanwhile, which waits for nothing.
        const waiting = waitingFor();
        if (waiting !== null) this.log.warn(`cluster initialization timed out after ${initTimeoutMs} ms; still waiting for: ${waiting.join(', ')}`);
        resolve();
      }, initTimeoutMs);
      initialized.then(
        () => {
          clock.clearTimeout(timer);
          resolve();
        },
        (error: unknown) => {
          clock.clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  /** The current membership of every cluster, in configuration order. */
  snapshots(): ClusterSnapshot[] {
    return [...this.clusters.values()].map((c) => c.snapshot);
  }

  /**
   * The membership the workers have, what a (re)started worker begins from: the snapshots less
   * the changes update_merge_window still holds, which reach it as one update.
   */
  workerSnapshots(): ClusterSnapshot[] {
    return [...this.clusters.values()].map((c) => c.published);
  }

  snapshot(cluster: string): ClusterSnapshot | undefined {
    return this.clusters.get(cluster)?.snapshot;
  }

  config(cluster: string): ClusterConfig | undefined {
    return this.clusters.get(cluster)?.config;
  }

  /** A worker's balancer picked `addresses` in the active cluster `cluster` (ORIGINAL_DST); others ignore it. */
  hostsPicked(cluster: string, addresses: readonly SocketAddress[]): void {
    this.clusters.get(cluster)?.discovery.hostsPicked?.(addresses);
  }

  /** Stops discovery and gives every host slot back. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const cluster of [...this.clusters.values(), ...this.warming.values()]) this.closeCluster(cluster);
  }

  private onHosts(cluster: ManagedCluster, discovered: readonly DiscoveredHost[], policy: LoadAssignmentPolicy): void {
    if (this.closed || cluster.closed) return;
    // Envoy keeps a healthy host that discovery dropped while a health checker can tell when it fails.
    const keepHealthy = cluster.config.healthChecks.length > 0 && !cluster.config.drainConnectionsOnHostRemoval;
    const update = diffMembership(cluster.snapshot, discovered, policy, this.deps.hosts, cluster.newHostFlags, keepHealthy);
    // The first result always makes version 1, even when it finds no host.
    if (update === null && cluster.snapshot.version > 0) return;
    this.publish(cluster, update ?? { cluster: cluster.config.name, version: 1, baseVersion: 0, hosts: [], added: [], changed: [], removed: [], policy: membershipPolicy(policy) });
  }

  private setHealthFlags(cluster: ManagedCluster, key: string, bits: number, set: boolean): boolean {
    if (this.closed || cluster.closed) return false;
    const current = cluster.snapshot;
    const index = current.hosts.findIndex((h) => hostKey(h) === key);
    if (index < 0) return false;
    const host = current.hosts[index]!;
    const flags = set ? host.healthFlags | bits : host.healthFlags & ~bits;
    if (flags === host.healthFlags) return true;
    const hosts = current.hosts.slice();
    const update = {
      cluster: current.cluster,
      version: current.version + 1,
      baseVersion: current.version,
      hosts,
      added: [] as string[],
      changed: [] as string[],
      removed: [] as string[],
      policy: current.policy,
    };
    const pendingRemoval = HealthFlag.PENDING_DYNAMIC_REMOVAL | HealthFlag.FAILED_ACTIVE_HC;
    if ((flags & pendingRemoval) === pendingRemoval) {
      // A host discovery dropped goes once its active check fails.
      hosts.splice(index, 1);
      update.removed.push(key);
      this.deps.hosts.free(host.slot);
    } else {
      hosts[index] = { ...host, healthFlags: flags };
      update.changed.push(key);
    }
    this.publish(cluster, update);
    return true;
  }

  /** Makes `update` the cluster's membership: its stats, the workers, and the health sources hear of it. */
  private publish(cluster: ManagedCluster, update: MembershipUpdate): void {
    cluster.snapshot = applyUpdate(update);
    this.updateStats(cluster, update);
    // Workers forked later take the snapshot in their init; only later changes are sent, and
    // GET /clusters and the health sources see a change the merge window holds from the workers;
    // the workers get changes only for the clusters they have (a warming one reaches them whole
    // when it is active).
    if (this.started && cluster.active) cluster.mergeWindow.offer(update);
    else cluster.published = cluster.snapshot;
    for (const source of cluster.healthSources) source.onMembership(cluster.snapshot, update);
  }

  private windowStats(): MergeWindowStats {
    const { stats } = this.deps;
    return (this.mergeStats ??= {
      clusterUpdated: stats.counter('cluster_manager.cluster_updated'),
      clusterUpdatedViaMerge: stats.counter('cluster_manager.cluster_updated_via_merge'),
      updateMergeCancelled: stats.counter('cluster_manager.update_merge_cancelled'),
      updateOutOfMergeWindow: stats.counter('cluster_manager.update_out_of_merge_window'),
    });
  }

  private updateStats(cluster: ManagedCluster, update: MembershipUpdate): void {
    const stats = (cluster.stats ??= membershipStats(this.deps.stats, cluster.config.statName));
    if (update.added.length > 0 || update.removed.length > 0) stats.change.inc();
    let healthy = 0;
    let degraded = 0;
    let excluded = 0;
    let maxWeight = 0;
    for (const host of update.hosts) {
      const health = hostHealth(host.healthFlags);
      if (health === 'healthy') healthy++;
      else if (health === 'degraded') degraded++;
      // Hosts awaiting their first active check are left out of the balancers' arithmetic.
      if ((host.healthFlags & EXCLUDING_FLAGS) !== 0) excluded++;
      maxWeight = Math.max(maxWeight, host.weight);
    }
    stats.total.set(update.hosts.length);
    stats.healthy.set(healthy);
    stats.degraded.set(degraded);
    stats.excluded.set(excluded);
    stats.maxHostWeight.set(maxWeight);
  }
}

const MEMBERSHIP_GAUGES = ['membership_total', 'membership_healthy', 'membership_degraded', 'membership_excluded', 'max_host_weight'];

function membershipStats(store: StatsStore, statName: string): MembershipStats {
  const { counters, gauges } = store.scalars(`cluster.${statName}.`, ['membership_change'], MEMBERSHIP_GAUGES, 'never_import');
  const [total, healthy, degraded, excluded, maxHostWeight] = gauges as [Gauge, Gauge, Gauge, Gauge, Gauge];
  return { change: counters[0]!, total, healthy, degraded, excluded, maxHostWeight };
}

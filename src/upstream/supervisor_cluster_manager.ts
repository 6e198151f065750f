// The one owner of cluster membership (Envoy's main-thread ClusterManagerImpl): each cluster's
// type discovers its hosts here, in the supervisor; every change becomes a versioned
// MembershipUpdate for the workers, and the current snapshots are what a (re)started worker
// and GET /clusters read. Host slots in the stats region follow membership: a joining host
// gets one, a leaving host gives it back.

import type { ClusterConfig } from '../config/model';
import type { Clock } from '../common/clock';
import type { SubscriptionFactory } from '../config/xds/subscription_factory';
import type { TlsContext } from '../tls/tls_context';
import type { Logger, LoggerFactory } from '../log/logger_api';
import type { RuntimeSource } from '../runtime/live_runtime';
import type { HostTable } from '../stats/host_table';
import type { Counter, Gauge, Scope, StatsStore } from '../stats/stats';
import type { ClusterDiscovery, ClusterType } from './cluster_discovery';
import { EXCLUDING_FLAGS, HealthFlag, hostHealth } from './health_flags';
import { applyUpdate, type ClusterSnapshot, diffMembership, type DiscoveredHost, hostKey, type MembershipUpdate } from './membership';
import { type MergeWindowStats, UpdateMergeWindow } from './update_merge_window';

/** Clusters started between two turns of the event loop, so that admin answers during a large start. */
const START_BATCH = 200;
/**
 * How long the server waits for the clusters' first results, as Envoy's initial_fetch_timeout
 * (default 15 s) bounds a dynamic resource: a cluster still waiting then serves what it has
 * (nothing, at first) and takes its result when it comes.
 */
export const CLUSTER_INIT_TIMEOUT_MS = 15_000;

export class UnknownClusterTypeError extends Error {
  constructor(cluster: string, type: string) {
    super(`cluster '${cluster}': discovery type ${type} is not registered`);
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
  readonly log: Logger;
  /** The cluster's stats scope (`cluster.<stat name>`). */
  readonly stats: Scope;
  readonly runtime: RuntimeSource;
  /** The host table, for state the workers share with the supervisor per host slot. */
  readonly hosts: HostTable;
  /** The cluster's current membership. */
  snapshot(): ClusterSnapshot;
  /** Has the supervisor reload TLS contexts the source made when their files change. */
  watchCertificates(contexts: readonly TlsContext[]): void;
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
  /** Health checking and outlier detection, asked once per cluster. */
  readonly healthSources?: readonly HealthSourceFactory[];
  /** Every membership change after start(), for the workers. */
  readonly onUpdate: (update: MembershipUpdate) => void;
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

interface ManagedCluster {
  readonly config: ClusterConfig;
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
  private readonly clusters = new Map<string, ManagedCluster>();
  private started = false;
  private closed = false;
  private mergeStats: MergeWindowStats | null = null;

  constructor(
    private readonly configs: readonly ClusterConfig[],
    private readonly deps: SupervisorClusterManagerDeps,
  ) {}

  /**
   * Creates every cluster and starts its discovery; resolves once every cluster is initialized
   * (its first result, or failure, is in), as Envoy's init manager holds the server until then,
   * or once the initialization timeout has passed.
   * @throws UnknownClusterTypeError for a type the registry lacks (the capability check refuses it first).
   */
  async initialize(): Promise<void> {
    const initialized: Promise<void>[] = [];
    for (let i = 0; i < this.configs.length; i++) {
      const config = this.configs[i]!;
      const type = this.deps.types.get(config.type);
      if (type === undefined) throw new UnknownClusterTypeError(config.name, config.type);
      const discovery = type.create(config, {
        log: this.deps.log('upstream'),
        stats: this.deps.stats.scope(`cluster.${config.statName}`),
        clock: this.deps.clock,
        subscriptions: this.deps.subscriptions,
      });
      const empty: ClusterSnapshot = { cluster: config.name, version: 0, hosts: [] };
      const managed: ManagedCluster = {
        config,
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
      this.clusters.set(config.name, managed);
      this.createHealthSources(managed);
      discovery.start((hosts) => this.onHosts(managed, hosts));
      // A health-checked cluster is initialized once its first hosts have their first verdict.
      initialized.push(discovery.initialized.then(() => Promise.all(managed.healthSources.map((h) => h.initialized))).then(() => undefined));
      if (i % START_BATCH === START_BATCH - 1) await new Promise((resolve) => setImmediate(resolve));
    }
    await this.withinInitTimeout(Promise.all(initialized));
    this.started = true;
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
      stats: this.deps.stats.scope(`cluster.${cluster.config.statName}`),
      runtime: this.deps.runtime,
      hosts: this.deps.hosts,
      snapshot: () => cluster.snapshot,
      watchCertificates: (contexts) => this.deps.certificates?.add(contexts),
      setHealthFlags: (key, bits, set) => this.setHealthFlags(cluster, key, bits, set),
    };
    for (const factory of factories) {
      const source = factory.create(context);
      if (source === null) continue;
      cluster.healthSources.push(source);
      cluster.newHostFlags |= source.newHostFlags;
    }
  }

  private withinInitTimeout(initialized: Promise<unknown>): Promise<void> {
    const { clock, initTimeoutMs = CLUSTER_INIT_TIMEOUT_MS } = this.deps;
    return new Promise<void>((resolve, reject) => {
      const timer = clock.setTimeout(() => {
        const waiting = [...this.clusters.values()].filter((c) => c.snapshot.version === 0).map((c) => c.config.name);
        this.deps.log('upstream').warn(`cluster initialization timed out after ${initTimeoutMs} ms; still waiting for: ${waiting.join(', ')}`);
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

  /** Stops discovery and gives every host slot back. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const cluster of this.clusters.values()) {
      cluster.discovery.close();
      cluster.mergeWindow.close();
      for (const source of cluster.healthSources) source.close();
      for (const host of cluster.snapshot.hosts) this.deps.hosts.free(host.slot);
    }
  }

  private onHosts(cluster: ManagedCluster, discovered: readonly DiscoveredHost[]): void {
    if (this.closed) return;
    // Envoy keeps a healthy host that discovery dropped while a health checker can tell when it fails.
    const keepHealthy = cluster.config.healthChecks.length > 0 && !cluster.config.drainConnectionsOnHostRemoval;
    const update = diffMembership(cluster.snapshot, discovered, this.deps.hosts, cluster.newHostFlags, keepHealthy);
    // The first result always makes version 1, even when it finds no host.
    if (update === null && cluster.snapshot.version > 0) return;
    this.publish(cluster, update ?? { cluster: cluster.config.name, version: 1, baseVersion: 0, hosts: [], added: [], changed: [], removed: [] });
  }

  private setHealthFlags(cluster: ManagedCluster, key: string, bits: number, set: boolean): boolean {
    if (this.closed) return false;
    const current = cluster.snapshot;
    const index = current.hosts.findIndex((h) => hostKey(h) === key);
    if (index < 0) return false;
    const host = current.hosts[index]!;
    const flags = set ? host.healthFlags | bits : host.healthFlags & ~bits;
    if (flags === host.healthFlags) return true;
    const hosts = current.hosts.slice();
    const update = { cluster: current.cluster, version: current.version + 1, baseVersion: current.version, hosts, added: [] as string[], changed: [] as string[], removed: [] as string[] };
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
    // GET /clusters and the health sources see a change the merge window holds from the workers.
    if (this.started) cluster.mergeWindow.offer(update);
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

function membershipStats(store: StatsStore, statName: string): MembershipStats {
  const prefix = `cluster.${statName}.`;
  return {
    change: store.counter(prefix + 'membership_change'),
    total: store.gauge(prefix + 'membership_total', 'never_import'),
    healthy: store.gauge(prefix + 'membership_healthy', 'never_import'),
    degraded: store.gauge(prefix + 'membership_degraded', 'never_import'),
    excluded: store.gauge(prefix + 'membership_excluded', 'never_import'),
    maxHostWeight: store.gauge(prefix + 'max_host_weight', 'never_import'),
  };
}

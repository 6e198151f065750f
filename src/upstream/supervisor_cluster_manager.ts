// The one owner of cluster membership (Envoy's main-thread ClusterManagerImpl): each cluster's
// type discovers its hosts here, in the supervisor; every change becomes a versioned
// MembershipUpdate for the workers, and the current snapshots are what a (re)started worker
// and GET /clusters read. Host slots in the stats region follow membership: a joining host
// gets one, a leaving host gives it back.

import type { ClusterConfig } from '../config/model';
import type { Clock } from '../common/clock';
import type { LoggerFactory } from '../log/logger_api';
import type { HostTable } from '../stats/host_table';
import type { Counter, Gauge, StatsStore } from '../stats/stats';
import type { ClusterDiscovery, ClusterType } from './cluster_discovery';
import { hostHealth } from './health_flags';
import { applyUpdate, type ClusterSnapshot, diffMembership, type DiscoveredHost, type MembershipUpdate } from './membership';

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

export interface SupervisorClusterManagerDeps {
  readonly types: ReadonlyMap<string, ClusterType>;
  readonly hosts: HostTable;
  readonly stats: StatsStore;
  readonly log: LoggerFactory;
  readonly clock: Clock;
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
  snapshot: ClusterSnapshot;
  /** Made at the first result: 10,000 static clusters should not cost handles they never change. */
  stats: MembershipStats | null;
}

export class SupervisorClusterManager {
  private readonly clusters = new Map<string, ManagedCluster>();
  private started = false;
  private closed = false;

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
      });
      const managed: ManagedCluster = { config, discovery, snapshot: { cluster: config.name, version: 0, hosts: [] }, stats: null };
      this.clusters.set(config.name, managed);
      discovery.start((hosts) => this.onHosts(managed, hosts));
      initialized.push(discovery.initialized);
      if (i % START_BATCH === START_BATCH - 1) await new Promise((resolve) => setImmediate(resolve));
    }
    await this.withinInitTimeout(Promise.all(initialized));
    this.started = true;
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
      for (const host of cluster.snapshot.hosts) this.deps.hosts.free(host.slot);
    }
  }

  private onHosts(cluster: ManagedCluster, discovered: readonly DiscoveredHost[]): void {
    if (this.closed) return;
    const update = diffMembership(cluster.snapshot, discovered, this.deps.hosts);
    // The first result always makes version 1, even when it finds no host.
    if (update === null && cluster.snapshot.version > 0) return;
    const next = update ?? { cluster: cluster.config.name, version: 1, baseVersion: 0, hosts: [], added: [], changed: [], removed: [] };
    cluster.snapshot = applyUpdate(next);
    this.updateStats(cluster, next);
    // Workers forked later take the snapshot in their init; only later changes are sent.
    if (this.started) this.deps.onUpdate(next);
  }

  private updateStats(cluster: ManagedCluster, update: MembershipUpdate): void {
    const stats = (cluster.stats ??= membershipStats(this.deps.stats, cluster.config.statName));
    if (update.added.length > 0 || update.removed.length > 0) stats.change.inc();
    let healthy = 0;
    let degraded = 0;
    let maxWeight = 0;
    for (const host of update.hosts) {
      const health = hostHealth(host.healthFlags);
      if (health === 'healthy') healthy++;
      else if (health === 'degraded') degraded++;
      maxWeight = Math.max(maxWeight, host.weight);
    }
    stats.total.set(update.hosts.length);
    stats.healthy.set(healthy);
    stats.degraded.set(degraded);
    // Excluded hosts (pending their first active check) arrive with health checking.
    stats.excluded.set(0);
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

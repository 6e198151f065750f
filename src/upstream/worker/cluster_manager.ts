// The worker's clusters by name (Envoy's ThreadLocalClusterManager): built from the
// configuration and the supervisor's membership snapshots, then kept current by its updates;
// CDS clusters join, are replaced and leave at run time.

import { type SecretSource, SecretStore } from '../../tls/secret_store';
import type { TlsContext } from '../../tls/tls_context';
import { atField } from '../../config/errors';
import { type Clock, SystemClock } from '../../common/clock';
import type { ClusterConfig, Locality } from '../../config/model';
import { ConnectionIds } from '../../log/connection_log';
import type { LoggerFactory } from '../../log/logger_api';
import { upstreamConnectionLogs } from '../../pool/upstream_connection_logs';
import type { RuntimeSource } from '../../runtime/live_runtime';
import type { StatsStore } from '../../stats/stats';
import { Cluster, type ClusterEnvironment, MembershipVersionError } from './cluster';
import type { DownstreamAddresses } from '../../network/downstream_addresses';
import { applyUpdate, type ClusterSnapshot, emptySnapshot, type MembershipUpdate } from '../shared/membership';
import type { PrioritySet } from './priority_set';
import { type RandomSource, mathRandom } from '../../common/random';
import type { WriteBatch } from '../../network/write_batch';

/** The largest read a socket makes at once: Node's own default. */
const READ_BUFFER_BYTES = 64 * 1024;

/** A snapshot or update for a cluster this worker does not have. */
export class UnknownClusterError extends Error {
  constructor(cluster: string) {
    super(`membership for unknown cluster '${cluster}'`);
    this.name = 'UnknownClusterError';
  }
}

export interface ClusterManagerOptions {
  /** The bootstrap's clusters, in order. */
  readonly configs: readonly ClusterConfig[];
  /** The CDS clusters active when this worker started (their snapshots are in `snapshots`). */
  readonly dynamicConfigs?: readonly ClusterConfig[];
  /** The supervisor's membership of each (a cluster without one starts empty). */
  readonly snapshots: readonly ClusterSnapshot[];
  readonly store: StatsStore;
  /** Read by the load balancers (panic threshold, zone routing overrides). */
  readonly runtime: RuntimeSource;
  readonly random?: RandomSource;
  /** cluster_manager.local_cluster_name: its hosts drive zone-aware routing in every other cluster. */
  readonly localClusterName?: string | null;
  /** The node's locality after --service-zone (nodeLocality); null when it has none. */
  readonly localLocality?: Locality | null;
  readonly log: LoggerFactory;
  /** Numbers upstream connections for their log lines. Default: a process of its own. */
  readonly connectionIds?: ConnectionIds;
  /** This worker sets the hashing balancers' table gauges; one worker does. Default true. */
  readonly reportsTables?: boolean;
  /**
   * Where a host's consecutive failures reaching a threshold go (the worker tells its supervisor).
   * Default: nowhere, for a data plane with no detector to eject (--mode validate).
   */
  readonly onConsecutiveFailure?: ClusterEnvironment['onConsecutiveFailure'];
  /** Where ORIGINAL_DST balancers' picks go (the worker tells its supervisor). Default: nowhere (--mode validate). */
  readonly onHostsPicked?: ClusterEnvironment['onHostsPicked'];
  /** Default: the system clock. */
  readonly clock?: Clock;
  /** The worker's (see ClusterEnvironment.writeBatch). Default: none, the writes go at once (--mode validate). */
  readonly writeBatch?: WriteBatch;
  /**
   * Builds a cluster only when a request first asks for it. A worker of a proxy with thousands
   * of clusters then starts in time independent of their number and pays only for those its
   * traffic touches. Off (every cluster built at once) where construction is the point: the
   * data plane check before serving and --mode validate. Default false.
   */
  readonly buildOnFirstUse?: boolean;
  /**
   * Each cluster is built once at start, in order, and let go; one a lookup asks for is built
   * again then. The data plane check, where construction is the point: 10,000 clusters built and
   * held at once cost as much again in their collection. Default false.
   */
  readonly buildEachOnce?: boolean;
  /**
   * The secrets the clusters' TLS contexts name (static_resources.secrets, SDS). Default: none,
   * for clusters that name no secret.
   */
  readonly secrets?: SecretSource;
}

/** A cluster not built yet: its configuration and the membership it will start from. */
interface PendingCluster {
  readonly config: ClusterConfig;
  /** Its index in the bootstrap's clusters, for the field path of a build error; -1 for CDS. */
  readonly index: number;
  snapshot: ClusterSnapshot;
}

export class ClusterManager {
  private readonly clusters = new Map<string, Cluster>();
  private readonly pending = new Map<string, PendingCluster>();
  /** Those keeping connections per downstream connection (ClusterInfo.downstreamSpecificConnections). */
  private downstreamSpecific: Cluster[] = [];
  private readonly environment: ClusterEnvironment;
  /** The local cluster's hosts, which every cluster built later follows too. */
  private readonly localPrioritySet: PrioritySet | null;
  /** Told of each cluster that joins, is replaced or leaves (aggregate balancers follow their children). */
  private readonly watchers = new Set<(name: string) => void>();

  /** @throws FieldError at `static_resources.clusters[i]...` for a cluster the data plane cannot serve yet */
  constructor(options: ClusterManagerOptions) {
    const environment: ClusterEnvironment = (this.environment = {
      store: options.store,
      runtime: options.runtime,
      random: options.random ?? mathRandom,
      readBuffer: Buffer.allocUnsafe(READ_BUFFER_BYTES),
      localLocality: options.localLocality ?? null,
      log: options.log('upstream'),
      connectionLogs: upstreamConnectionLogs(options.connectionIds ?? ConnectionIds.forOneProcess(), options.log),
      reportsTables: options.reportsTables ?? true,
      onConsecutiveFailure: options.onConsecutiveFailure ?? (() => undefined),
      clusters: {
        // An aggregate's child is built when the aggregate asks for it, as a request would.
        get: (name) => this.get(name),
        watch: (listener) => {
          this.watchers.add(listener);
          return () => this.watchers.delete(listener);
        },
      },
      onHostsPicked: options.onHostsPicked ?? (() => undefined),
      clock: options.clock ?? new SystemClock(),
      writeBatch: options.writeBatch ?? null,
      secrets: options.secrets ?? new SecretStore([]),
    });
    const byName = new Map(options.snapshots.map((s) => [s.cluster, s]));
    const snapshotOf = (config: ClusterConfig) => byName.get(config.name) ?? emptySnapshot(config);
    // The local cluster comes first, so that every other cluster's balancer can follow its
    // hosts; it does not follow itself (as in Envoy). Validation made sure it exists.
    const localIndex = options.configs.findIndex((config) => config.name === options.localClusterName);
    this.localPrioritySet = null;
    if (localIndex >= 0) {
      const config = options.configs[localIndex]!;
      this.localPrioritySet = this.build({ config, index: localIndex, snapshot: snapshotOf(config) }, null).prioritySet;
    }
    const lazy = options.buildOnFirstUse ?? false;
    const eachOnce = options.buildEachOnce ?? false;
    const start = (pending: PendingCluster) => {
      if (eachOnce) this.construct(pending, this.localPrioritySet);
      if (eachOnce || (lazy && !observableWhenBuilt(pending.config, environment.reportsTables))) this.pending.set(pending.config.name, pending);
      else this.build(pending, this.localPrioritySet);
    };
    options.configs.forEach((config, index) => {
      if (index !== localIndex) start({ config, index, snapshot: snapshotOf(config) });
    });
    for (const config of options.dynamicConfigs ?? []) start({ config, index: -1, snapshot: snapshotOf(config) });
  }

  private build(pending: PendingCluster, localPrioritySet: PrioritySet | null): Cluster {
    const cluster = this.register(this.construct(pending, localPrioritySet));
    this.changed(pending.config.name);
    return cluster;
  }

  /** @throws FieldError at the cluster's field (its index among the bootstrap's, or its name for CDS's) */
  private construct({ config, index, snapshot }: PendingCluster, localPrioritySet: PrioritySet | null): Cluster {
    const at = index < 0 ? config.name : `static_resources.clusters[${index}]`;
    return atField(at, () => new Cluster(config, snapshot, this.environment, localPrioritySet));
  }

  private register(cluster: Cluster): Cluster {
    this.clusters.set(cluster.info.name, cluster);
    if (cluster.info.downstreamSpecificConnections) this.downstreamSpecific.push(cluster);
    return cluster;
  }

  /**
   * A CDS cluster became active: a new one joins; one of a name already here replaces it, and
   * the old one's pools drain (requests in flight finish on them).
   * @throws FieldError for a cluster the data plane cannot serve (the capability check refuses it first)
   */
  add(config: ClusterConfig, snapshot: ClusterSnapshot): void {
    const cluster = this.construct({ config, index: -1, snapshot }, this.localPrioritySet);
    const replaced = this.clusters.get(config.name);
    this.pending.delete(config.name);
    this.register(cluster);
    if (replaced !== undefined) this.retire(replaced);
    this.changed(config.name);
  }

  /** A CDS cluster is gone: new requests find no cluster (503), those in flight finish. False for an unknown one. */
  remove(name: string): boolean {
    if (this.pending.delete(name)) return true;
    const cluster = this.clusters.get(name);
    if (cluster === undefined) return false;
    this.clusters.delete(name);
    this.retire(cluster);
    this.changed(name);
    return true;
  }

  private changed(name: string): void {
    // A watcher may stop watching (a retired aggregate) while others are told.
    for (const watcher of [...this.watchers]) watcher(name);
  }

  private retire(cluster: Cluster): void {
    cluster.drain();
    if (cluster.info.downstreamSpecificConnections) this.downstreamSpecific = this.downstreamSpecific.filter((c) => c !== cluster);
  }

  /** A downstream connection closed: connections kept for it alone go. */
  releaseDownstream(downstream: DownstreamAddresses): void {
    for (const cluster of this.downstreamSpecific) cluster.releaseDownstream(downstream);
  }

  get(name: string): Cluster | undefined {
    const cluster = this.clusters.get(name);
    if (cluster !== undefined) return cluster;
    const pending = this.pending.get(name);
    if (pending === undefined) return undefined;
    this.pending.delete(name);
    return this.build(pending, this.localPrioritySet);
  }

  /** The supervisor changed a cluster's membership. @throws MembershipVersionError, UnknownClusterError */
  update(update: MembershipUpdate): void {
    const cluster = this.clusters.get(update.cluster);
    if (cluster !== undefined) return cluster.update(update);
    const pending = this.pending.get(update.cluster);
    if (pending === undefined) throw new UnknownClusterError(update.cluster);
    if (update.baseVersion !== pending.snapshot.version) throw new MembershipVersionError(update.cluster, pending.snapshot.version, update);
    pending.snapshot = applyUpdate(update);
  }

  /** The TLS contexts the clusters connect with, for the certificate watcher. */
  tlsContexts(): TlsContext[] {
    return [...this.clusters.values()].flatMap((cluster) => cluster.info.transportSockets.tlsContexts());
  }

  /** Closes every upstream connection. */
  close(): void {
    for (const cluster of this.clusters.values()) cluster.close();
  }
}

/**
 * Whether building `config`'s cluster has effects a reader sees before any request: its TLS
 * contexts join the certificate watcher, and the reporting worker counts transport socket
 * matches and sets the hashing balancers' table gauges as hosts are made. Such a cluster is
 * built at start even when others wait for their first use.
 */
function observableWhenBuilt(config: ClusterConfig, reportsTables: boolean): boolean {
  if (config.transportSocket !== null || config.transportSocketMatches.length > 0) return true;
  return reportsTables && (config.lbPolicy === 'RING_HASH' || config.lbPolicy === 'MAGLEV');
}

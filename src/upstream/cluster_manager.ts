// The worker's clusters by name (Envoy's ThreadLocalClusterManager): built from the
// configuration and the supervisor's membership snapshots, then kept current by its updates;
// CDS clusters join, are replaced and leave at run time.

import type { TlsContext } from '../tls/tls_context';
import { atField } from '../config/errors';
import { type Clock, SystemClock } from '../common/clock';
import type { ClusterConfig, Locality } from '../config/model';
import type { LoggerFactory } from '../log/logger_api';
import type { RuntimeSource } from '../runtime/live_runtime';
import type { StatsStore } from '../stats/stats';
import { Cluster, type ClusterEnvironment } from './cluster';
import type { DownstreamAddresses } from './upstream_network_filter';
import { mathRandom, type RandomSource } from './lb/load_balancer';
import type { ClusterSnapshot, MembershipUpdate } from './membership';
import type { PrioritySet } from './priority_set';

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
}

export class ClusterManager {
  private readonly clusters = new Map<string, Cluster>();
  /** Those keeping connections per downstream connection (ClusterInfo.downstreamSpecificConnections). */
  private downstreamSpecific: Cluster[] = [];
  private readonly environment: ClusterEnvironment;
  /** The local cluster's hosts, which every cluster built later follows too. */
  private readonly localPrioritySet: PrioritySet | null;

  /** @throws FieldError at `static_resources.clusters[i]...` for a cluster the data plane cannot serve yet */
  constructor(options: ClusterManagerOptions) {
    const environment: ClusterEnvironment = (this.environment = {
      store: options.store,
      runtime: options.runtime,
      random: options.random ?? mathRandom,
      readBuffer: Buffer.allocUnsafe(READ_BUFFER_BYTES),
      localLocality: options.localLocality ?? null,
      log: options.log('upstream'),
      reportsTables: options.reportsTables ?? true,
      onConsecutiveFailure: options.onConsecutiveFailure ?? (() => undefined),
      onHostsPicked: options.onHostsPicked ?? (() => undefined),
      clock: options.clock ?? new SystemClock(),
    });
    const byName = new Map(options.snapshots.map((s) => [s.cluster, s]));
    const build = (i: number, localPrioritySet: PrioritySet | null): Cluster => {
      const config = options.configs[i];
      const snapshot = byName.get(config.name) ?? { cluster: config.name, version: 0, hosts: [] };
      const cluster = atField(`static_resources.clusters[${i}]`, () => new Cluster(config, snapshot, environment, localPrioritySet));
      this.clusters.set(config.name, cluster);
      if (cluster.info.downstreamSpecificConnections) this.downstreamSpecific.push(cluster);
      return cluster;
    };
    // The local cluster comes first, so that every other cluster's balancer can follow its
    // hosts; it does not follow itself (as in Envoy). Validation made sure it exists.
    const localIndex = options.configs.findIndex((config) => config.name === options.localClusterName);
    const localPrioritySet = (this.localPrioritySet = localIndex < 0 ? null : build(localIndex, null).prioritySet);
    options.configs.forEach((_, i) => {
      if (i !== localIndex) build(i, localPrioritySet);
    });
    for (const config of options.dynamicConfigs ?? []) this.add(config, byName.get(config.name) ?? { cluster: config.name, version: 0, hosts: [] });
  }

  /**
   * A CDS cluster became active: a new one joins; one of a name already here replaces it, and
   * the old one's pools drain (requests in flight finish on them).
   * @throws FieldError for a cluster the data plane cannot serve (the capability check refuses it first)
   */
  add(config: ClusterConfig, snapshot: ClusterSnapshot): void {
    const cluster = atField(config.name, () => new Cluster(config, snapshot, this.environment, this.localPrioritySet));
    const replaced = this.clusters.get(config.name);
    this.clusters.set(config.name, cluster);
    if (replaced !== undefined) this.retire(replaced);
    if (cluster.info.downstreamSpecificConnections) this.downstreamSpecific.push(cluster);
  }

  /** A CDS cluster is gone: new requests find no cluster (503), those in flight finish. False for an unknown one. */
  remove(name: string): boolean {
    const cluster = this.clusters.get(name);
    if (cluster === undefined) return false;
    this.clusters.delete(name);
    this.retire(cluster);
    return true;
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
    return this.clusters.get(name);
  }

  /** The supervisor changed a cluster's membership. @throws MembershipVersionError, UnknownClusterError */
  update(update: MembershipUpdate): void {
    const cluster = this.clusters.get(update.cluster);
    if (cluster === undefined) throw new UnknownClusterError(update.cluster);
    cluster.update(update);
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

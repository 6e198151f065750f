// The worker's clusters by name (Envoy's ThreadLocalClusterManager), built from the bootstrap.

import type { ClusterConfig } from '../config/model';
import type { StatsStore } from '../stats/stats';
import type { HostSlotAssignments } from '../server/worker_protocol';
import { Cluster } from './cluster';
import type { DownstreamAddresses } from './upstream_network_filter';
import { mathRandom, type RandomSource } from './lb/load_balancer';

/** The largest read a socket makes at once: Node's own default. */
const READ_BUFFER_BYTES = 64 * 1024;

export class ClusterManager {
  private readonly clusters = new Map<string, Cluster>();
  /** Those keeping connections per downstream connection (ClusterInfo.downstreamSpecificConnections). */
  private readonly downstreamSpecific: Cluster[] = [];

  /** Throws UnsupportedClusterError for a cluster the data plane cannot serve yet. */
  constructor(configs: readonly ClusterConfig[], store: StatsStore, hostSlots: HostSlotAssignments, random: RandomSource = mathRandom) {
    const readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
    for (const config of configs) {
      const cluster = new Cluster(config, store, hostSlots, random, readBuffer);
      this.clusters.set(config.name, cluster);
      if (cluster.info.downstreamSpecificConnections) this.downstreamSpecific.push(cluster);
    }
  }

  /** A downstream connection closed: connections kept for it alone go. */
  releaseDownstream(downstream: DownstreamAddresses): void {
    for (const cluster of this.downstreamSpecific) cluster.releaseDownstream(downstream);
  }

  get(name: string): Cluster | undefined {
    return this.clusters.get(name);
  }

  /** Closes every upstream connection. */
  close(): void {
    for (const cluster of this.clusters.values()) cluster.close();
  }
}

// The worker's clusters by name (Envoy's ThreadLocalClusterManager), built from the bootstrap.

import { atField } from '../config/errors';
import type { ClusterConfig } from '../config/model';
import type { StatsStore } from '../stats/stats';
import type { HostSlotAssignments } from '../server/worker_protocol';
import { Cluster } from './cluster';
import { mathRandom, type RandomSource } from './lb/load_balancer';

/** The largest read a socket makes at once: Node's own default. */
const READ_BUFFER_BYTES = 64 * 1024;

export class ClusterManager {
  private readonly clusters = new Map<string, Cluster>();

  /**
   * @param configs the bootstrap's clusters, in order
   * @throws FieldError at `static_resources.clusters[i]...` for a cluster the data plane cannot serve yet
   */
  constructor(configs: readonly ClusterConfig[], store: StatsStore, hostSlots: HostSlotAssignments, random: RandomSource = mathRandom) {
    const readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
    for (const [i, config] of configs.entries()) {
      this.clusters.set(config.name, atField(`static_resources.clusters[${i}]`, () => new Cluster(config, store, hostSlots, random, readBuffer)));
    }
  }

  get(name: string): Cluster | undefined {
    return this.clusters.get(name);
  }

  /** Closes every upstream connection. */
  close(): void {
    for (const cluster of this.clusters.values()) cluster.close();
  }
}

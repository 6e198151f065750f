// What the connection pools and filters need to know about a cluster, beyond its hosts.

import type { ClusterConfig } from '../config/model';
import type { StatsStore } from '../stats/stats';
import { ClusterStats } from './cluster_stats';

export class ClusterInfo {
  readonly name: string;
  readonly statName: string;
  readonly connectTimeoutMs: number;
  /** 0: no limit. */
  readonly maxRequestsPerConnection: number;
  readonly perConnectionBufferLimitBytes: number;
  private statsHandles: ClusterStats | null = null;

  constructor(
    config: ClusterConfig,
    private readonly store: StatsStore,
  ) {
    this.name = config.name;
    this.statName = config.statName;
    this.connectTimeoutMs = config.connectTimeoutMs;
    this.maxRequestsPerConnection = config.maxRequestsPerConnection;
    this.perConnectionBufferLimitBytes = config.perConnectionBufferLimitBytes;
  }

  /**
   * Made on first use: a worker of a proxy with thousands of clusters pays only for those its
   * traffic touches (the supervisor has already interned every name, see declareClusterStats).
   */
  get stats(): ClusterStats {
    return (this.statsHandles ??= new ClusterStats(this.store.scope(`cluster.${this.statName}`)));
  }
}

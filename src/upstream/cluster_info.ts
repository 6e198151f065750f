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
  readonly stats: ClusterStats;

  constructor(config: ClusterConfig, store: StatsStore) {
    this.name = config.name;
    this.statName = config.statName;
    this.connectTimeoutMs = config.connectTimeoutMs;
    this.maxRequestsPerConnection = config.maxRequestsPerConnection;
    this.perConnectionBufferLimitBytes = config.perConnectionBufferLimitBytes;
    this.stats = new ClusterStats(store.scope(`cluster.${config.statName}`));
  }
}

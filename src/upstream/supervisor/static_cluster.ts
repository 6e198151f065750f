// STATIC: the hosts are the load_assignment's, known at once and never changing.

import type { ClusterConfig } from '../../config/model';
import type { ClusterDiscovery, ClusterType } from './cluster_discovery';
import { discoveredHosts } from '../shared/membership';

class StaticDiscovery implements ClusterDiscovery {
  readonly initialized = Promise.resolve();

  constructor(private readonly config: ClusterConfig) {}

  start(onHosts: Parameters<ClusterDiscovery['start']>[0]): void {
    onHosts(discoveredHosts(this.config.loadAssignment.endpoints));
  }

  close(): void {}
}

export const STATIC_CLUSTER: ClusterType = {
  name: 'STATIC',
  create: (config) => new StaticDiscovery(config),
};

// GET /clusters: every cluster with its hosts, their health, placement and per-host stats.

import type { ClusterConfig } from '../config/model';
import { HOST_STAT_NAMES, type HostStatName } from '../stats/region_layout';
import { addressString } from '../upstream/address';
import { AdminHandler } from './admin_server';
import { ClusterStatus, HostStatus, renderClustersText } from './clusters_text';

const ZERO_STATS = Object.fromEntries(HOST_STAT_NAMES.map((stat) => [stat, 0])) as Record<HostStatName, number>;

const EDS_UNHEALTHY = new Set(['UNHEALTHY', 'DRAINING', 'TIMEOUT']);

function isCanary(metadata: Readonly<Record<string, unknown>>): boolean {
  const lb = metadata['proxy.lb'] as Record<string, unknown> | undefined;
  return lb?.canary === true;
}

/** A host's statistics, by cluster name and address; null for a host without a slot. */
export type HostStatsSource = (cluster: string, address: string) => Record<HostStatName, number> | null;

export function clusterStatuses(clusters: readonly ClusterConfig[], hostStats: HostStatsSource): ClusterStatus[] {
  return clusters.map((c) => ({
    name: c.name,
    addedViaApi: false,
    hosts: c.loadAssignment.endpoints.flatMap((locality) =>
      locality.lbEndpoints.map((e): HostStatus => {
        const address = addressString(e.address);
        const stats = hostStats(c.name, address) ?? ZERO_STATS;
        return {
          address,
          hostname: e.hostname,
          health: EDS_UNHEALTHY.has(e.healthStatus) ? '/failed_eds_health' : 'healthy',
          weight: e.loadBalancingWeight,
          region: locality.locality.region,
          zone: locality.locality.zone,
          subZone: locality.locality.subZone,
          canary: isCanary(e.metadata),
          priority: locality.priority,
          successRate: -1,
          localOriginSuccessRate: -1,
          stats,
        };
      }),
    ),
  }));
}

export function clustersHandler(clusters: readonly ClusterConfig[], hostStats: HostStatsSource): AdminHandler {
  return {
    path: '/clusters',
    help: 'upstream cluster status',
    mutatesState: false,
    decodeQuery: true,
    handle: () => ({ status: 200, body: renderClustersText('static', clusterStatuses(clusters, hostStats)) }),
  };
}

// GET /clusters: every cluster with its hosts, their health, placement and per-host stats.

import type { ClusterConfig } from '../config/model';
import type { StatSample } from '../stats/reader';
import { hostStatName } from '../stats/store';
import { HOST_STAT_NAMES } from '../stats/stats';
import { addressString } from '../upstream/address';
import { AdminHandler } from './admin_server';
import { ClusterStatus, HostStatus, renderClustersText } from './clusters_text';

const EDS_UNHEALTHY = new Set(['UNHEALTHY', 'DRAINING', 'TIMEOUT']);

function isCanary(metadata: Readonly<Record<string, unknown>>): boolean {
  const lb = metadata['proxy.lb'] as Record<string, unknown> | undefined;
  return lb?.canary === true;
}

export function clusterStatuses(clusters: readonly ClusterConfig[], samples: readonly StatSample[]): ClusterStatus[] {
  const values = new Map<string, number>();
  for (const s of samples) if (s.hidden) values.set(s.name, s.value);
  return clusters.map((c) => ({
    name: c.name,
    addedViaApi: false,
    hosts: c.loadAssignment.endpoints.flatMap((locality) =>
      locality.lbEndpoints.map((e): HostStatus => {
        const address = addressString(e.address);
        const stats = Object.fromEntries(
          HOST_STAT_NAMES.map((stat) => [stat, values.get(hostStatName(c.statName, address, stat)) ?? 0]),
        ) as HostStatus['stats'];
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

export function clustersHandler(clusters: readonly ClusterConfig[], read: () => StatSample[]): AdminHandler {
  return {
    path: '/clusters',
    help: 'upstream cluster status',
    mutatesState: false,
    decodeQuery: true,
    handle: () => ({ status: 200, body: renderClustersText('static', clusterStatuses(clusters, read())) }),
  };
}

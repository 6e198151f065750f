// GET /clusters: every cluster's membership as the supervisor's cluster manager holds it, with
// each host's statistics from the stats region. Never rebuilt from the configuration.

import type { HostStatName } from '../shared_memory/region_layout';
import type { HostSlot } from '../stats/stats';
import { isCanaryHost } from '../upstream/shared/canary';
import { HealthFlag, healthFlagsString } from '../upstream/shared/health_flags';
import { type ClusterSnapshot, hostKey, type MemberHost } from '../upstream/shared/membership';
import type { Origin, SuccessRateSummary } from '../upstream/supervisor/outlier/detector';
import { addressString } from '../network/socket_address';
import { AdminHandler } from './admin_server';
import { ClusterStatus, HealthStatusJson, HostStatus, OutlierSummary, renderClustersJson, renderClustersText, Thresholds } from './clusters_text';
import { HOST_STAT_NAMES } from '../shared_memory/region_layout';

const ZERO_STATS = Object.fromEntries(HOST_STAT_NAMES.map((stat) => [stat, 0])) as Record<HostStatName, number>;

/** A host's statistics by its slot; null for a slot that is gone. */
export type HostStatsSource = (slot: HostSlot) => Record<HostStatName, number> | null;

/** A cluster's circuit breaker limits in effect now (runtime overrides applied), by priority. */
export type ThresholdsSource = (cluster: string) => { readonly default: Thresholds; readonly high: Thresholds } | null;

/** Envoy's defaults: the limits of a cluster the source does not know (gone since the snapshot). */
const DEFAULT_THRESHOLDS: Thresholds = { maxConnections: 1024, maxPendingRequests: 1024, maxRequests: 1024, maxRetries: 3 };
/** What outlier detection computed for a cluster at its last interval (the supervisor's detector). */
export interface OutlierStatusSource {
  /** -1 when the host's request volume was too low. */
  successRate(key: string, origin: Origin): number;
  successRateSummary(origin: Origin): SuccessRateSummary;
}

/** A cluster's outlier detection by cluster name; null for one without outlier_detection. */
export type OutlierSource = (cluster: string) => OutlierStatusSource | null;

const NO_OUTLIER_DETECTION: OutlierSource = () => null;

function hostStatus(h: MemberHost, stats: HostStatsSource, outlier: OutlierStatusSource | null): HostStatus {
  const key = hostKey(h);
  return {
    ip: h.address.address,
    port: h.address.port,
    address: addressString(h.address),
    hostname: h.hostname,
    healthFlags: h.healthFlags,
    weight: h.weight,
    region: h.locality.region,
    zone: h.locality.zone,
    subZone: h.locality.subZone,
    canary: isCanaryHost(h.metadata),
    priority: h.priority,
    // Without outlier detection nothing computes them: Envoy's -1.
    successRate: outlier?.successRate(key, 'external') ?? -1,
    localOriginSuccessRate: outlier?.successRate(key, 'local_origin') ?? -1,
    stats: stats(h.slot) ?? ZERO_STATS,
  };
}

function outlierSummary(outlier: OutlierStatusSource | null): OutlierSummary | null {
  if (outlier === null) return null;
  const external = outlier.successRateSummary('external');
  const localOrigin = outlier.successRateSummary('local_origin');
  return {
    successRateAverage: external.average,
    successRateEjectionThreshold: external.ejectionThreshold,
    localOriginSuccessRateAverage: localOrigin.average,
    localOriginSuccessRateEjectionThreshold: localOrigin.ejectionThreshold,
  };
}

export function clusterStatuses(
  snapshots: readonly ClusterSnapshot[],
  stats: HostStatsSource,
  thresholds: ThresholdsSource,
  outliers: OutlierSource = NO_OUTLIER_DETECTION,
  addedViaApi: (cluster: string) => boolean = () => false,
): ClusterStatus[] {
  return snapshots.map((s) => {
    const outlier = outliers(s.cluster);
    return {
      name: s.cluster,
      addedViaApi: addedViaApi(s.cluster),
      outlier: outlierSummary(outlier),
      thresholds: thresholds(s.cluster) ?? { default: DEFAULT_THRESHOLDS, high: DEFAULT_THRESHOLDS },
      hosts: s.hosts.map((h) => hostStatus(h, stats, outlier)),
    };
  });
}

/** admin.v3.HostHealthStatus of a host's flags. */
export function healthStatusJson(flags: number): HealthStatusJson {
  const has = (bit: number) => (flags & bit) !== 0;
  return {
    ...(has(HealthFlag.FAILED_ACTIVE_HC) ? { failed_active_health_check: true } : {}),
    ...(has(HealthFlag.FAILED_OUTLIER_CHECK) ? { failed_outlier_check: true } : {}),
    ...(has(HealthFlag.DEGRADED_ACTIVE_HC) ? { failed_active_degraded_check: true } : {}),
    ...(has(HealthFlag.PENDING_DYNAMIC_REMOVAL) ? { pending_dynamic_removal: true } : {}),
    ...(has(HealthFlag.PENDING_ACTIVE_HC) ? { pending_active_hc: true } : {}),
    eds_health_status: has(HealthFlag.FAILED_EDS_HEALTH) ? 'UNHEALTHY' : has(HealthFlag.DEGRADED_EDS_HEALTH) ? 'DEGRADED' : 'HEALTHY',
  };
}

/** Where the cluster set came from: the last CDS version (`static` without CDS), and which clusters CDS added. */
export interface ClusterSetSource {
  versionInfo(): string;
  addedViaApi(cluster: string): boolean;
}

export function clustersHandler(
  snapshots: () => readonly ClusterSnapshot[],
  stats: HostStatsSource,
  thresholds: ThresholdsSource,
  outliers: OutlierSource,
  origin: ClusterSetSource,
): AdminHandler {
  return {
    path: '/clusters',
    help: 'upstream cluster status',
    mutatesState: false,
    decodeQuery: true,
    handle: (request) => {
      const statuses = clusterStatuses(snapshots(), stats, thresholds, outliers, (cluster) => origin.addedViaApi(cluster));
      if (request.query.get('format') === 'json') {
        return { status: 200, contentType: 'application/json', body: renderClustersJson(statuses, healthStatusJson) };
      }
      return { status: 200, body: renderClustersText(origin.versionInfo(), statuses, healthFlagsString) };
    },
  };
}

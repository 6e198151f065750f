// GET /clusters in Envoy's two forms: text lines `<cluster>::<host>::<field>::<value>` after
// `version_info::<v>`, and `?format=json`, the admin.v3.Clusters message as Envoy prints it
// (pretty, field-number order, defaults omitted). Pure.

import { HOST_STAT_NAMES, type HostStatName } from '../shared_memory/region_layout';

/** A circuit breaker's limits for one routing priority. */
export interface Thresholds {
  readonly maxConnections: number;
  readonly maxPendingRequests: number;
  readonly maxRequests: number;
  readonly maxRetries: number;
}

export interface HostStatus {
  readonly ip: string;
  readonly port: number;
  /** `asString()`: `10.0.0.1:80`, `[::1]:80`. */
  readonly address: string;
  readonly hostname: string;
  readonly healthFlags: number;
  readonly weight: number;
  readonly region: string;
  readonly zone: string;
  readonly subZone: string;
  readonly canary: boolean;
  readonly priority: number;
  /** -1 when the request volume of the interval is too low. */
  readonly successRate: number;
  readonly localOriginSuccessRate: number;
  readonly stats: Readonly<Record<HostStatName, number>>;
}

/** A cluster's success rate figures from outlier detection's last interval; -1 when not computed. */
export interface OutlierSummary {
  readonly successRateAverage: number;
  readonly successRateEjectionThreshold: number;
  readonly localOriginSuccessRateAverage: number;
  readonly localOriginSuccessRateEjectionThreshold: number;
}

export interface ClusterStatus {
  readonly name: string;
  readonly addedViaApi: boolean;
  /** null for a cluster without outlier detection: Envoy prints no outlier lines for it. */
  readonly outlier: OutlierSummary | null;
  readonly thresholds: { readonly default: Thresholds; readonly high: Thresholds };
  readonly hosts: readonly HostStatus[];
}

/** Envoy prints doubles with fmt's `{}`: integral values keep a `.0`. */
export function formatDouble(v: number): string {
  return Number.isInteger(v) ? v.toFixed(1) : String(v);
}

/** C's `%g` (fmt's `{:g}`), which Envoy uses for the outlier lines: 6 significant digits, no trailing zeros. */
export function formatG(v: number): string {
  if (v === 0 || !Number.isFinite(v)) return String(v);
  const exponent = Math.floor(Math.log10(Math.abs(Number(v.toPrecision(6)))));
  if (exponent < -4 || exponent >= 6) {
    const [mantissa, exp] = v.toExponential(5).split('e') as [string, string];
    const digits = exp.replace(/^[+-]/, '').padStart(2, '0');
    return `${mantissa.replace(/\.?0+$/, '')}e${exp.startsWith('-') ? '-' : '+'}${digits}`;
  }
  return String(Number(v.toPrecision(6)));
}

export function renderClustersText(versionInfo: string, clusters: readonly ClusterStatus[], healthWords: (flags: number) => string): string {
  const lines: string[] = [`version_info::${versionInfo}`];
  for (const c of clusters) {
    if (c.outlier !== null) {
      const p = `${c.name}::outlier::`;
      lines.push(
        `${p}success_rate_average::${formatG(c.outlier.successRateAverage)}`,
        `${p}success_rate_ejection_threshold::${formatG(c.outlier.successRateEjectionThreshold)}`,
        `${p}local_origin_success_rate_average::${formatG(c.outlier.localOriginSuccessRateAverage)}`,
        `${p}local_origin_success_rate_ejection_threshold::${formatG(c.outlier.localOriginSuccessRateEjectionThreshold)}`,
      );
    }
    for (const [priority, t] of [['default', c.thresholds.default], ['high', c.thresholds.high]] as const) {
      const p = `${c.name}::${priority}_priority::`;
      lines.push(`${p}max_connections::${t.maxConnections}`, `${p}max_pending_requests::${t.maxPendingRequests}`, `${p}max_requests::${t.maxRequests}`, `${p}max_retries::${t.maxRetries}`);
    }
    lines.push(`${c.name}::added_via_api::${c.addedViaApi}`);
    for (const h of c.hosts) {
      const p = `${c.name}::${h.address}::`;
      for (const stat of HOST_STAT_NAMES) lines.push(`${p}${stat}::${h.stats[stat]}`);
      lines.push(
        `${p}hostname::${h.hostname}`,
        `${p}health_flags::${healthWords(h.healthFlags)}`,
        `${p}weight::${h.weight}`,
        `${p}region::${h.region}`,
        `${p}zone::${h.zone}`,
        `${p}sub_zone::${h.subZone}`,
        `${p}canary::${h.canary}`,
        `${p}priority::${h.priority}`,
        `${p}success_rate::${formatDouble(h.successRate)}`,
        `${p}local_origin_success_rate::${formatDouble(h.localOriginSuccessRate)}`,
      );
    }
  }
  return lines.join('\n') + '\n';
}

/** Envoy's host counters, then gauges, in the order its host statistics declare them. */
const JSON_COUNTERS: readonly HostStatName[] = ['cx_connect_fail', 'cx_total', 'rq_error', 'rq_success', 'rq_timeout', 'rq_total'];
const JSON_GAUGES: readonly HostStatName[] = ['cx_active', 'rq_active'];

/** The admin.v3.HostHealthStatus fields a host's flags set (false fields are omitted). */
export interface HealthStatusJson {
  readonly failed_active_health_check?: true;
  readonly failed_outlier_check?: true;
  readonly failed_active_degraded_check?: true;
  readonly pending_dynamic_removal?: true;
  readonly pending_active_hc?: true;
  readonly eds_health_status: 'HEALTHY' | 'UNHEALTHY' | 'DEGRADED';
}

export function renderClustersJson(clusters: readonly ClusterStatus[], healthStatus: (flags: number) => HealthStatusJson): string {
  const thresholds = (t: Thresholds, priority?: 'HIGH') => ({
    ...(priority ? { priority } : {}),
    max_connections: t.maxConnections,
    max_pending_requests: t.maxPendingRequests,
    max_requests: t.maxRequests,
    max_retries: t.maxRetries,
  });
  const metric = (h: HostStatus, name: HostStatName, gauge: boolean) => ({
    ...(gauge ? { type: 'GAUGE' } : {}),
    // uint64 in proto JSON is a string; a zero value is omitted.
    ...(h.stats[name] !== 0 ? { value: String(h.stats[name]) } : {}),
    name,
  });
  const host = (h: HostStatus) => ({
    address: { socket_address: { address: h.ip, port_value: h.port } },
    stats: [...JSON_COUNTERS.map((n) => metric(h, n, false)), ...JSON_GAUGES.map((n) => metric(h, n, true))],
    health_status: healthStatus(h.healthFlags),
    ...(h.successRate >= 0 ? { success_rate: { value: h.successRate } } : {}),
    weight: h.weight,
    ...(h.hostname !== '' ? { hostname: h.hostname } : {}),
    ...(h.priority !== 0 ? { priority: h.priority } : {}),
    ...(h.localOriginSuccessRate >= 0 ? { local_origin_success_rate: { value: h.localOriginSuccessRate } } : {}),
    locality: {
      ...(h.region !== '' ? { region: h.region } : {}),
      ...(h.zone !== '' ? { zone: h.zone } : {}),
      ...(h.subZone !== '' ? { sub_zone: h.subZone } : {}),
    },
  });
  const body = {
    cluster_statuses: clusters.map((c) => ({
      name: c.name,
      ...(c.addedViaApi ? { added_via_api: true } : {}),
      ...(c.outlier !== null && c.outlier.successRateEjectionThreshold > 0
        ? { success_rate_ejection_threshold: { value: c.outlier.successRateEjectionThreshold } }
        : {}),
      ...(c.hosts.length > 0 ? { host_statuses: c.hosts.map(host) } : {}),
      ...(c.outlier !== null && c.outlier.localOriginSuccessRateEjectionThreshold > 0
        ? { local_origin_success_rate_ejection_threshold: { value: c.outlier.localOriginSuccessRateEjectionThreshold } }
        : {}),
      circuit_breakers: { thresholds: [thresholds(c.thresholds.default), thresholds(c.thresholds.high, 'HIGH')] },
    })),
  };
  // Protobuf's pretty printer indents by one space.
  return JSON.stringify(body, null, 1);
}

// GET /clusters text: `version_info::<v>`, then per cluster and host the spec's per-host
// statistics and fields as `<cluster>::<host>::<field>::<value>` lines. Pure.

import { HOST_STAT_NAMES } from '../stats/region_layout';

export interface HostStatus {
  readonly address: string;
  readonly hostname: string;
  /** `healthy`, or the failing states concatenated (`/failed_active_hc/failed_outlier_check`). */
  readonly health: string;
  readonly weight: number;
  readonly region: string;
  readonly zone: string;
  readonly subZone: string;
  readonly canary: boolean;
  readonly priority: number;
  /** -1 when the request volume of the interval is too low. */
  readonly successRate: number;
  readonly localOriginSuccessRate: number;
  readonly stats: Readonly<Record<(typeof HOST_STAT_NAMES)[number], number>>;
}

export interface ClusterStatus {
  readonly name: string;
  readonly addedViaApi: boolean;
  readonly hosts: readonly HostStatus[];
}

/** Envoy prints doubles with fmt's `{}`: integral values keep a `.0`. */
export function formatDouble(v: number): string {
  return Number.isInteger(v) ? v.toFixed(1) : String(v);
}

export function renderClustersText(versionInfo: string, clusters: readonly ClusterStatus[]): string {
  const lines: string[] = [`version_info::${versionInfo}`];
  for (const c of clusters) {
    lines.push(`${c.name}::added_via_api::${c.addedViaApi}`);
    for (const h of c.hosts) {
      const p = `${c.name}::${h.address}::`;
      for (const stat of HOST_STAT_NAMES) lines.push(`${p}${stat}::${h.stats[stat]}`);
      lines.push(
        `${p}hostname::${h.hostname}`,
        `${p}healthy::${h.health}`,
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

// A stats snapshot the size of a proxy with many clusters: 40 stats per cluster (Envoy's usual
// cluster counters and gauges, response codes and classes among them, so tag extraction has
// real work), a few server stats, and two latency histograms for some clusters. Values are
// arbitrary; sizes and names are what the renderers' cost depends on.

import type { HistogramSample, HistogramSummary, StatsSnapshot } from '../src/stats/sample';
import { ScalarSample, scalarList } from '../test/helpers/histogram_samples';

const CLUSTER_COUNTERS = [
  'lb_healthy_panic',
  'membership_change',
  'update_attempt',
  'update_success',
  'upstream_cx_connect_fail',
  'upstream_cx_connect_timeout',
  'upstream_cx_destroy',
  'upstream_cx_destroy_local',
  'upstream_cx_destroy_remote',
  'upstream_cx_http1_total',
  'upstream_cx_max_requests',
  'upstream_cx_none_healthy',
  'upstream_cx_protocol_error',
  'upstream_cx_rx_bytes_total',
  'upstream_cx_total',
  'upstream_cx_tx_bytes_total',
  'upstream_rq_1xx',
  'upstream_rq_200',
  'upstream_rq_2xx',
  'upstream_rq_3xx',
  'upstream_rq_404',
  'upstream_rq_4xx',
  'upstream_rq_503',
  'upstream_rq_5xx',
  'upstream_rq_completed',
  'upstream_rq_pending_failure_eject',
  'upstream_rq_pending_overflow',
  'upstream_rq_pending_total',
  'upstream_rq_retry',
  'upstream_rq_rx_reset',
  'upstream_rq_timeout',
  'upstream_rq_total',
  'upstream_rq_tx_reset',
];
const CLUSTER_GAUGES = [
  'max_host_weight',
  'membership_healthy',
  'membership_total',
  'upstream_cx_active',
  'upstream_cx_rx_bytes_buffered',
  'upstream_rq_active',
  'upstream_rq_pending_active',
];
export const STATS_PER_CLUSTER = CLUSTER_COUNTERS.length + CLUSTER_GAUGES.length;

/** Samples spread evenly over [0, max]: answers in constant time. */
class UniformSummary implements HistogramSummary {
  constructor(
    readonly count: number,
    private readonly max: number,
  ) {}

  get sum(): number {
    return (this.count * this.max) / 2;
  }

  quantile(q: number): number {
    return this.count === 0 ? NaN : q * this.max;
  }

  countAtOrBelow(bound: number): number {
    return Math.round(this.count * Math.min(1, bound / this.max));
  }

  forEachSample(visit: (value: number, count: number) => void): void {
    for (let j = 1; j <= this.count; j++) visit(Math.round(((j - 0.5) * this.max) / this.count), 1);
  }
}

const decoder = new TextDecoder();

/** A name as the stats region's reader gives it: decoded from bytes, a flat string (a concatenation is a rope, slower to hash). */
function decoded(name: string): string {
  return decoder.decode(Buffer.from(name));
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export function syntheticSnapshot(clusters: number, clustersWithHistograms: number): StatsSnapshot {
  const scalars: ScalarSample[] = [];
  const histograms: HistogramSample[] = [];
  for (let c = 0; c < clusters; c++) {
    const prefix = `cluster.service_${c}.`;
    for (const [i, name] of CLUSTER_COUNTERS.entries()) scalars.push({ name: decoded(prefix + name), kind: 'counter', value: (c * 7 + i) % 1000, used: i % 3 !== 0 });
    for (const [i, name] of CLUSTER_GAUGES.entries()) scalars.push({ name: decoded(prefix + name), kind: 'gauge', value: i, used: true });
    if (c < clustersWithHistograms) {
      for (const name of ['upstream_cx_connect_ms', 'upstream_rq_time']) {
        histograms.push({ name: decoded(prefix + name), used: true, interval: new UniformSummary(10, 50), cumulative: new UniformSummary(1000 + c, 120) });
      }
    }
  }
  for (const name of ['server.live', 'server.uptime', 'server.concurrency', 'http.admin.downstream_rq_2xx', 'listener.admin.downstream_cx_total']) {
    scalars.push({ name, kind: name.startsWith('server') ? 'gauge' : 'counter', value: 1, used: true });
  }
  return { scalars: scalarList(scalars.sort(byName)), histograms: histograms.sort(byName) };
}

// The `cluster.<stat_name>.*` statistics, as Envoy 1.16 names them (ALL_CLUSTER_STATS plus the
// router's upstream_rq_time). The supervisor interns every name of every cluster at start, so
// /stats lists them at 0 before traffic; a worker makes handles only for clusters it uses.

import type { ClusterConfig } from '../../config/model';
import { SlotFlag, StatKind } from '../../shared_memory/region_layout';
import { ResponseCodeCounters } from '../../stats/response_code_counters';
import type { SharedStatsStore } from '../../stats/store';
import type { Counter, Gauge, GaugeImportMode, Histogram, Scope } from '../../stats/stats';
import type { StatGroup } from '../../stats/name_table';
import { circuitBreakerStatGroups } from '../shared/circuit_breaker_names';
import { TIMEOUT_BUDGET_HISTOGRAMS } from './timeout_budget_stats';
import { transportSocketStatGroups } from '../shared/cluster_transport_sockets';
import { HTTP2_CODEC_COUNTERS } from '../../http/http2/codec_stats';

type CounterName = (typeof CLUSTER_COUNTERS)[number];
type GaugeName = (typeof CLUSTER_GAUGES)[number][0];
type HistogramName = (typeof CLUSTER_HISTOGRAMS)[number];

/**
 * Envoy's ALL_CLUSTER_STATS counters, declared whole: one of a feature this proxy lacks stays 0,
 * which is the truth; a feature that arrives wires its lines.
 */
export const CLUSTER_COUNTERS = [
  'assignment_stale',
  'assignment_timeout_received',
  'bind_errors',
  'lb_healthy_panic',
  'lb_local_cluster_not_ok',
  'lb_recalculate_zone_structures',
  'lb_subsets_created',
  'lb_subsets_fallback',
  'lb_subsets_fallback_panic',
  'lb_subsets_removed',
  'lb_subsets_selected',
  'lb_zone_cluster_too_small',
  'lb_zone_no_capacity_left',
  'lb_zone_number_differs',
  'lb_zone_routing_all_directly',
  'lb_zone_routing_cross_zone',
  'lb_zone_routing_sampled',
  'membership_change',
  'original_dst_host_invalid',
  'retry_or_shadow_abandoned',
  'update_attempt',
  'update_empty',
  'update_failure',
  'update_no_rebuild',
  'update_success',
  'upstream_cx_close_notify',
  'upstream_cx_connect_attempts_exceeded',
  'upstream_cx_connect_fail',
  'upstream_cx_connect_timeout',
  'upstream_cx_destroy',
  'upstream_cx_destroy_local',
  'upstream_cx_destroy_local_with_active_rq',
  'upstream_cx_destroy_remote',
  'upstream_cx_destroy_remote_with_active_rq',
  'upstream_cx_destroy_with_active_rq',
  'upstream_cx_http1_total',
  'upstream_cx_http2_total',
  'upstream_cx_idle_timeout',
  'upstream_cx_max_duration_reached',
  'upstream_cx_max_requests',
  'upstream_cx_none_healthy',
  'upstream_cx_overflow',
  'upstream_cx_pool_overflow',
  'upstream_cx_protocol_error',
  'upstream_cx_rx_bytes_total',
  'upstream_cx_total',
  'upstream_cx_tx_bytes_total',
  'upstream_flow_control_backed_up_total',
  'upstream_flow_control_drained_total',
  'upstream_flow_control_paused_reading_total',
  'upstream_flow_control_resumed_reading_total',
  'upstream_internal_redirect_failed_total',
  'upstream_internal_redirect_succeeded_total',
  'upstream_rq_cancelled',
  'upstream_rq_completed',
  // load_assignment.policy.drop_overloads: requests the router dropped (Envoy's load report counter).
  'upstream_rq_drop_overload',
  'upstream_rq_maintenance_mode',
  'upstream_rq_max_duration_reached',
  'upstream_rq_pending_failure_eject',
  'upstream_rq_pending_overflow',
  'upstream_rq_pending_total',
  'upstream_rq_per_try_timeout',
  'upstream_rq_retry',
  'upstream_rq_retry_limit_exceeded',
  'upstream_rq_retry_overflow',
  'upstream_rq_retry_success',
  'upstream_rq_rx_reset',
  'upstream_rq_timeout',
  'upstream_rq_total',
  'upstream_rq_tx_reset',
] as const;

/** Envoy's ALL_CLUSTER_STATS gauges with their import modes. */
export const CLUSTER_GAUGES = [
  ['lb_subsets_active', 'accumulate'],
  ['max_host_weight', 'never_import'],
  ['membership_degraded', 'never_import'],
  ['membership_excluded', 'never_import'],
  ['membership_healthy', 'never_import'],
  ['membership_total', 'never_import'],
  ['upstream_cx_active', 'accumulate'],
  ['upstream_cx_rx_bytes_buffered', 'accumulate'],
  ['upstream_cx_tx_bytes_buffered', 'accumulate'],
  ['upstream_rq_active', 'accumulate'],
  ['upstream_rq_pending_active', 'accumulate'],
  ['version', 'never_import'],
] as const satisfies readonly (readonly [string, GaugeImportMode])[];

/** Milliseconds each; upstream_rq_time is the router's, charged to the cluster as in Envoy. */
export const CLUSTER_HISTOGRAMS = ['upstream_cx_connect_ms', 'upstream_cx_length_ms', 'upstream_rq_time'] as const;

export class ClusterStats {
  readonly counters: Readonly<Record<CounterName, Counter>>;
  readonly gauges: Readonly<Record<GaugeName, Gauge>>;
  readonly histograms: Readonly<Record<HistogramName, Histogram>>;
  private readonly responseCodes: ResponseCodeCounters;
  private readonly internal: RequestCategoryStats;
  private readonly external: RequestCategoryStats;
  private readonly canary: RequestCategoryStats;

  constructor(scope: Scope) {
    this.counters = Object.fromEntries(CLUSTER_COUNTERS.map((n) => [n, scope.counter(n)])) as Record<CounterName, Counter>;
    this.gauges = Object.fromEntries(CLUSTER_GAUGES.map(([n, mode]) => [n, scope.gauge(n, mode)])) as Record<GaugeName, Gauge>;
    this.histograms = Object.fromEntries(CLUSTER_HISTOGRAMS.map((n) => [n, scope.histogram(n, 'milliseconds')])) as Record<HistogramName, Histogram>;
    this.responseCodes = new ResponseCodeCounters(scope, this.counters.upstream_rq_completed);
    this.internal = new RequestCategoryStats(scope.scope('internal'));
    this.external = new RequestCategoryStats(scope.scope('external'));
    this.canary = new RequestCategoryStats(scope.scope('canary'));
  }

  /**
   * Envoy's chargeResponseStat: upstream_rq_completed, upstream_rq_<class>xx, upstream_rq_<code>,
   * then the same under `internal.` or `external.` (the request had x-proxy-internal or not) and
   * under `canary.` for a canary host's response.
   */
  chargeResponseCode(code: number, internal: boolean, canary = false): void {
    this.responseCodes.charge(code);
    (internal ? this.internal : this.external).codes.charge(code);
    if (canary) this.canary.codes.charge(code);
  }

  /** Envoy's chargeResponseTiming: upstream_rq_time, and again under the request's categories. */
  recordRequestTime(ms: number, internal: boolean, canary: boolean): void {
    this.histograms.upstream_rq_time.recordValue(ms);
    (internal ? this.internal : this.external).recordRequestTime(ms);
    if (canary) this.canary.recordRequestTime(ms);
  }
}

/** One category's code counters and upstream_rq_time, made on first use as Envoy's dynamic stats are. */
class RequestCategoryStats {
  readonly codes: ResponseCodeCounters;
  private requestTime: Histogram | null = null;

  constructor(private readonly scope: Scope) {
    this.codes = new ResponseCodeCounters(scope);
  }

  recordRequestTime(ms: number): void {
    (this.requestTime ??= this.scope.histogram('upstream_rq_time', 'milliseconds')).recordValue(ms);
  }
}

/**
 * Interns every name of `config`'s cluster (no handles, no value blocks), so that /stats lists
 * them at 0 before traffic. Any process may: the workers share the clusters out at start.
 */
export function declareClusterStatNames(store: SharedStatsStore, config: ClusterConfig): void {
  const gauges = (mode: GaugeImportMode) => CLUSTER_GAUGES.filter(([, m]) => m === mode).map(([name]) => name);
  const groups: StatGroup[] = [
    { scope: '', names: CLUSTER_COUNTERS, kind: StatKind.Counter, flags: 0 },
    { scope: '', names: gauges('accumulate'), kind: StatKind.Gauge, flags: 0 },
    { scope: '', names: gauges('never_import'), kind: StatKind.Gauge, flags: SlotFlag.NeverImport },
    { scope: '', names: CLUSTER_HISTOGRAMS, kind: StatKind.Histogram, flags: 0 },
  ];
  if (config.trackTimeoutBudgets) groups.push({ scope: '', names: TIMEOUT_BUDGET_HISTOGRAMS, kind: StatKind.Histogram, flags: 0 });
  if (config.http2ProtocolOptions !== null) groups.push({ scope: 'http2.', names: HTTP2_CODEC_COUNTERS, kind: StatKind.Counter, flags: 0 });
  groups.push(...circuitBreakerStatGroups(config), ...transportSocketStatGroups(config));
  // One call: the cluster's names take one run of slots (see NameTable.internAll).
  store.declareAll(`cluster.${config.statName}.`, groups);
}

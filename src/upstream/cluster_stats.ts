// The `cluster.<stat_name>.*` statistics a worker writes, as Envoy names them
// (ALL_CLUSTER_STATS). Handles are made once per cluster; per-status-code counters once per
// code seen, so no request ever builds a stat name.

import type { Counter, Gauge, Scope } from '../stats/stats';

export class ClusterStats {
  readonly upstream_cx_total: Counter;
  readonly upstream_cx_active: Gauge;
  readonly upstream_cx_http1_total: Counter;
  readonly upstream_cx_connect_fail: Counter;
  readonly upstream_cx_connect_timeout: Counter;
  readonly upstream_cx_destroy: Counter;
  readonly upstream_cx_destroy_local: Counter;
  readonly upstream_cx_destroy_remote: Counter;
  readonly upstream_cx_destroy_with_active_rq: Counter;
  readonly upstream_cx_max_requests: Counter;
  readonly upstream_cx_none_healthy: Counter;
  readonly upstream_cx_protocol_error: Counter;
  readonly upstream_cx_rx_bytes_total: Counter;
  readonly upstream_cx_tx_bytes_total: Counter;
  readonly upstream_rq_total: Counter;
  readonly upstream_rq_active: Gauge;
  readonly upstream_rq_completed: Counter;
  readonly upstream_rq_pending_total: Counter;
  readonly upstream_rq_pending_active: Gauge;
  readonly upstream_rq_pending_failure_eject: Counter;
  readonly upstream_rq_timeout: Counter;
  readonly upstream_rq_rx_reset: Counter;
  readonly upstream_rq_tx_reset: Counter;
  readonly lb_healthy_panic: Counter;
  /** upstream_rq_1xx .. upstream_rq_5xx, indexed by the code's first digit. */
  private readonly classes: readonly Counter[];
  private readonly codes: Counter[] = [];

  constructor(private readonly scope: Scope) {
    this.upstream_cx_total = scope.counter('upstream_cx_total');
    this.upstream_cx_active = scope.gauge('upstream_cx_active');
    this.upstream_cx_http1_total = scope.counter('upstream_cx_http1_total');
    this.upstream_cx_connect_fail = scope.counter('upstream_cx_connect_fail');
    this.upstream_cx_connect_timeout = scope.counter('upstream_cx_connect_timeout');
    this.upstream_cx_destroy = scope.counter('upstream_cx_destroy');
    this.upstream_cx_destroy_local = scope.counter('upstream_cx_destroy_local');
    this.upstream_cx_destroy_remote = scope.counter('upstream_cx_destroy_remote');
    this.upstream_cx_destroy_with_active_rq = scope.counter('upstream_cx_destroy_with_active_rq');
    this.upstream_cx_max_requests = scope.counter('upstream_cx_max_requests');
    this.upstream_cx_none_healthy = scope.counter('upstream_cx_none_healthy');
    this.upstream_cx_protocol_error = scope.counter('upstream_cx_protocol_error');
    this.upstream_cx_rx_bytes_total = scope.counter('upstream_cx_rx_bytes_total');
    this.upstream_cx_tx_bytes_total = scope.counter('upstream_cx_tx_bytes_total');
    this.upstream_rq_total = scope.counter('upstream_rq_total');
    this.upstream_rq_active = scope.gauge('upstream_rq_active');
    this.upstream_rq_completed = scope.counter('upstream_rq_completed');
    this.upstream_rq_pending_total = scope.counter('upstream_rq_pending_total');
    this.upstream_rq_pending_active = scope.gauge('upstream_rq_pending_active');
    this.upstream_rq_pending_failure_eject = scope.counter('upstream_rq_pending_failure_eject');
    this.upstream_rq_timeout = scope.counter('upstream_rq_timeout');
    this.upstream_rq_rx_reset = scope.counter('upstream_rq_rx_reset');
    this.upstream_rq_tx_reset = scope.counter('upstream_rq_tx_reset');
    this.lb_healthy_panic = scope.counter('lb_healthy_panic');
    this.classes = [1, 2, 3, 4, 5].map((c) => scope.counter(`upstream_rq_${c}xx`));
  }

  /** Envoy's chargeResponseStat: upstream_rq_completed, upstream_rq_<class>xx, upstream_rq_<code>. */
  chargeResponseCode(code: number): void {
    this.upstream_rq_completed.inc();
    const cls = this.classes[Math.floor(code / 100) - 1];
    if (cls !== undefined) cls.inc();
    let counter = this.codes[code];
    if (counter === undefined) {
      counter = this.scope.counter(`upstream_rq_${code}`);
      this.codes[code] = counter;
    }
    counter.inc();
  }
}

// The tcp_proxy filter's statistics, under `tcp.<stat_prefix>.` as in Envoy.

import type { Counter, Gauge, Scope } from '../../stats/stats';

export class TcpProxyStats {
  readonly downstream_cx_total: Counter;
  readonly downstream_cx_no_route: Counter;
  readonly downstream_cx_rx_bytes_total: Counter;
  readonly downstream_cx_tx_bytes_total: Counter;
  readonly downstream_cx_tx_bytes_buffered: Gauge;
  readonly downstream_flow_control_paused_reading_total: Counter;
  readonly downstream_flow_control_resumed_reading_total: Counter;
  readonly idle_timeout: Counter;
  readonly upstream_flush_total: Counter;
  readonly upstream_flush_active: Gauge;

  constructor(scope: Scope) {
    this.downstream_cx_total = scope.counter('downstream_cx_total');
    this.downstream_cx_no_route = scope.counter('downstream_cx_no_route');
    this.downstream_cx_rx_bytes_total = scope.counter('downstream_cx_rx_bytes_total');
    this.downstream_cx_tx_bytes_total = scope.counter('downstream_cx_tx_bytes_total');
    this.downstream_cx_tx_bytes_buffered = scope.gauge('downstream_cx_tx_bytes_buffered');
    this.downstream_flow_control_paused_reading_total = scope.counter('downstream_flow_control_paused_reading_total');
    this.downstream_flow_control_resumed_reading_total = scope.counter('downstream_flow_control_resumed_reading_total');
    this.idle_timeout = scope.counter('idle_timeout');
    this.upstream_flush_total = scope.counter('upstream_flush_total');
    this.upstream_flush_active = scope.gauge('upstream_flush_active');
  }
}

// The HTTP connection manager's statistics, under `http.<stat_prefix>.` as in Envoy.

import type { Counter, Gauge, Histogram, Scope } from '../../../stats/stats';

export class HttpConnectionManagerStats {
  readonly downstream_cx_total: Counter;
  readonly downstream_cx_active: Gauge;
  readonly downstream_cx_http1_total: Counter;
  readonly downstream_cx_http1_active: Gauge;
  readonly downstream_cx_http2_total: Counter;
  readonly downstream_cx_http2_active: Gauge;
  readonly downstream_cx_destroy: Counter;
  readonly downstream_cx_destroy_local: Counter;
  readonly downstream_cx_destroy_remote: Counter;
  readonly downstream_cx_destroy_active_rq: Counter;
  readonly downstream_cx_rx_bytes_total: Counter;
  readonly downstream_cx_tx_bytes_total: Counter;
  readonly downstream_cx_tx_bytes_buffered: Gauge;
  readonly downstream_flow_control_paused_reading_total: Counter;
  readonly downstream_flow_control_resumed_reading_total: Counter;
  readonly downstream_cx_protocol_error: Counter;
  readonly downstream_cx_drain_close: Counter;
  /** HTTP/1 connections closed after a response while disable_http_keepalive was active. */
  readonly downstream_cx_overload_disable_keepalive: Counter;
  readonly downstream_cx_idle_timeout: Counter;
  readonly downstream_cx_max_duration_reached: Counter;
  readonly downstream_rq_total: Counter;
  readonly downstream_rq_http1_total: Counter;
  readonly downstream_rq_http2_total: Counter;
  readonly downstream_rq_active: Gauge;
  readonly downstream_rq_completed: Counter;
  readonly downstream_rq_rx_reset: Counter;
  readonly downstream_rq_tx_reset: Counter;
  readonly downstream_rq_timeout: Counter;
  /** request_headers_timeout ran out before a request's head was whole. */
  readonly downstream_rq_header_timeout: Counter;
  readonly downstream_rq_idle_timeout: Counter;
  readonly downstream_rq_max_duration_reached: Counter;
  readonly downstream_rq_ws_on_non_ws_route: Counter;
  /** 413s for a request body larger than the filters may buffer. */
  readonly downstream_rq_too_large: Counter;
  /** 503s for requests that arrived while stop_accepting_requests was active. */
  readonly downstream_rq_overload_close: Counter;
  /** Responses failed for a body larger than the filters may buffer. */
  readonly rs_too_large: Counter;
  readonly downstream_cx_upgrades_total: Counter;
  readonly downstream_cx_upgrades_active: Gauge;
  readonly downstream_cx_length_ms: Histogram;
  readonly downstream_rq_time: Histogram;
  /** downstream_rq_1xx .. downstream_rq_5xx, indexed by the code's first digit. */
  private readonly classes: readonly Counter[];

  constructor(scope: Scope) {
    this.downstream_cx_total = scope.counter('downstream_cx_total');
    this.downstream_cx_active = scope.gauge('downstream_cx_active');
    this.downstream_cx_http1_total = scope.counter('downstream_cx_http1_total');
    this.downstream_cx_http1_active = scope.gauge('downstream_cx_http1_active');
    this.downstream_cx_http2_total = scope.counter('downstream_cx_http2_total');
    this.downstream_cx_http2_active = scope.gauge('downstream_cx_http2_active');
    this.downstream_cx_destroy = scope.counter('downstream_cx_destroy');
    this.downstream_cx_destroy_local = scope.counter('downstream_cx_destroy_local');
    this.downstream_cx_destroy_remote = scope.counter('downstream_cx_destroy_remote');
    this.downstream_cx_destroy_active_rq = scope.counter('downstream_cx_destroy_active_rq');
    this.downstream_cx_rx_bytes_total = scope.counter('downstream_cx_rx_bytes_total');
    this.downstream_cx_tx_bytes_total = scope.counter('downstream_cx_tx_bytes_total');
    this.downstream_cx_tx_bytes_buffered = scope.gauge('downstream_cx_tx_bytes_buffered');
    this.downstream_flow_control_paused_reading_total = scope.counter('downstream_flow_control_paused_reading_total');
    this.downstream_flow_control_resumed_reading_total = scope.counter('downstream_flow_control_resumed_reading_total');
    this.downstream_cx_protocol_error = scope.counter('downstream_cx_protocol_error');
    this.downstream_cx_drain_close = scope.counter('downstream_cx_drain_close');
    this.downstream_cx_overload_disable_keepalive = scope.counter('downstream_cx_overload_disable_keepalive');
    this.downstream_cx_idle_timeout = scope.counter('downstream_cx_idle_timeout');
    this.downstream_cx_max_duration_reached = scope.counter('downstream_cx_max_duration_reached');
    this.downstream_rq_total = scope.counter('downstream_rq_total');
    this.downstream_rq_http1_total = scope.counter('downstream_rq_http1_total');
    this.downstream_rq_http2_total = scope.counter('downstream_rq_http2_total');
    this.downstream_rq_active = scope.gauge('downstream_rq_active');
    this.downstream_rq_completed = scope.counter('downstream_rq_completed');
    this.downstream_rq_rx_reset = scope.counter('downstream_rq_rx_reset');
    this.downstream_rq_tx_reset = scope.counter('downstream_rq_tx_reset');
    this.downstream_rq_timeout = scope.counter('downstream_rq_timeout');
    this.downstream_rq_header_timeout = scope.counter('downstream_rq_header_timeout');
    this.downstream_rq_idle_timeout = scope.counter('downstream_rq_idle_timeout');
    this.downstream_rq_max_duration_reached = scope.counter('downstream_rq_max_duration_reached');
    this.downstream_rq_ws_on_non_ws_route = scope.counter('downstream_rq_ws_on_non_ws_route');
    this.downstream_rq_too_large = scope.counter('downstream_rq_too_large');
    this.downstream_rq_overload_close = scope.counter('downstream_rq_overload_close');
    this.rs_too_large = scope.counter('rs_too_large');
    this.downstream_cx_upgrades_total = scope.counter('downstream_cx_upgrades_total');
    this.downstream_cx_upgrades_active = scope.gauge('downstream_cx_upgrades_active');
    this.downstream_cx_length_ms = scope.histogram('downstream_cx_length_ms', 'milliseconds');
    this.downstream_rq_time = scope.histogram('downstream_rq_time', 'milliseconds');
    this.classes = [1, 2, 3, 4, 5].map((c) => scope.counter(`downstream_rq_${c}xx`));
  }

  /** Envoy's chargeStats on a response's headers. */
  chargeResponseCode(code: number): void {
    this.downstream_rq_completed.inc();
    this.classes[Math.floor(code / 100) - 1]?.inc();
  }
}

// Envoy's HTTP/2 codec statistics that this build counts: `http2.*` for downstream connections
// (outside any connection manager's prefix, as in Envoy), `cluster.<name>.http2.*` for upstream ones.

import type { Counter, Scope } from '../../stats/stats';

export const HTTP2_CODEC_COUNTERS = [
  'rx_reset',
  'tx_reset',
  'rx_messaging_error',
  'header_overflow',
  'dropped_headers_with_underscores',
  'requests_rejected_with_underscores_in_headers',
  'outbound_flood',
  'outbound_control_flood',
  'inbound_empty_frames_flood',
  'inbound_priority_frames_flood',
  'inbound_window_update_frames_flood',
  'inbound_rst_stream_frames_flood',
  'inbound_continuation_frames_flood',
] as const;

export class Http2CodecStats {
  /** RST_STREAM received. */
  readonly rx_reset: Counter;
  /** RST_STREAM sent. */
  readonly tx_reset: Counter;
  /** A header list that makes no valid message. */
  readonly rx_messaging_error: Counter;
  /** A header list longer than max_headers_count: the stream is reset. */
  readonly header_overflow: Counter;
  /** Request headers removed by headers_with_underscores_action DROP_HEADER. */
  readonly dropped_headers_with_underscores: Counter;
  /** Streams reset by headers_with_underscores_action REJECT_REQUEST. */
  readonly requests_rejected_with_underscores_in_headers: Counter;
  /** Connections closed for more than max_outbound_frames frames waiting to be written. */
  readonly outbound_flood: Counter;
  /** Connections closed for more than max_outbound_control_frames PING/SETTINGS ACKs and RST_STREAMs waiting. */
  readonly outbound_control_flood: Counter;
  /** Connections closed for max_consecutive_inbound_frames_with_empty_payload. */
  readonly inbound_empty_frames_flood: Counter;
  /** Connections closed for max_inbound_priority_frames_per_stream. */
  readonly inbound_priority_frames_flood: Counter;
  /** Connections closed for max_inbound_window_update_frames_per_data_frame_sent. */
  readonly inbound_window_update_frames_flood: Counter;
  /** The proxy's own: connections closed for rapid resets (CVE-2023-44487). */
  readonly inbound_rst_stream_frames_flood: Counter;
  /** The proxy's own: connections closed for a header block in too many CONTINUATION frames. */
  readonly inbound_continuation_frames_flood: Counter;

  constructor(scope: Scope) {
    this.rx_reset = scope.counter(HTTP2_CODEC_COUNTERS[0]);
    this.tx_reset = scope.counter(HTTP2_CODEC_COUNTERS[1]);
    this.rx_messaging_error = scope.counter(HTTP2_CODEC_COUNTERS[2]);
    this.header_overflow = scope.counter(HTTP2_CODEC_COUNTERS[3]);
    this.dropped_headers_with_underscores = scope.counter(HTTP2_CODEC_COUNTERS[4]);
    this.requests_rejected_with_underscores_in_headers = scope.counter(HTTP2_CODEC_COUNTERS[5]);
    this.outbound_flood = scope.counter(HTTP2_CODEC_COUNTERS[6]);
    this.outbound_control_flood = scope.counter(HTTP2_CODEC_COUNTERS[7]);
    this.inbound_empty_frames_flood = scope.counter(HTTP2_CODEC_COUNTERS[8]);
    this.inbound_priority_frames_flood = scope.counter(HTTP2_CODEC_COUNTERS[9]);
    this.inbound_window_update_frames_flood = scope.counter(HTTP2_CODEC_COUNTERS[10]);
    this.inbound_rst_stream_frames_flood = scope.counter(HTTP2_CODEC_COUNTERS[11]);
    this.inbound_continuation_frames_flood = scope.counter(HTTP2_CODEC_COUNTERS[12]);
  }
}

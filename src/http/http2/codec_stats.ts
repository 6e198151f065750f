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

  constructor(scope: Scope) {
    this.rx_reset = scope.counter(HTTP2_CODEC_COUNTERS[0]);
    this.tx_reset = scope.counter(HTTP2_CODEC_COUNTERS[1]);
    this.rx_messaging_error = scope.counter(HTTP2_CODEC_COUNTERS[2]);
    this.header_overflow = scope.counter(HTTP2_CODEC_COUNTERS[3]);
    this.dropped_headers_with_underscores = scope.counter(HTTP2_CODEC_COUNTERS[4]);
    this.requests_rejected_with_underscores_in_headers = scope.counter(HTTP2_CODEC_COUNTERS[5]);
  }
}

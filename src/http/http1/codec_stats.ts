// Envoy's HTTP/1 codec statistics that this build counts: `http1.*` for downstream connections,
// outside any connection manager's prefix, as in Envoy.

import type { Counter, Scope } from '../../stats/stats';

export class Http1CodecStats {
  /** Request headers removed by headers_with_underscores_action DROP_HEADER. */
  readonly dropped_headers_with_underscores: Counter;
  /** Requests refused by headers_with_underscores_action REJECT_REQUEST. */
  readonly requests_rejected_with_underscores_in_headers: Counter;

  constructor(scope: Scope) {
    this.dropped_headers_with_underscores = scope.counter('dropped_headers_with_underscores');
    this.requests_rejected_with_underscores_in_headers = scope.counter('requests_rejected_with_underscores_in_headers');
  }
}

// Envoy's control_plane.* statistics, on the server's root scope: every gRPC stream to a
// management server writes the same ones, as in Envoy.

import type { Counter, Gauge, Scope } from '../../stats/stats';

export class ControlPlaneStats {
  /** 1 while a stream to the management server is open. */
  readonly connected_state: Gauge;
  /** Requests waiting for the rate limiter (rate_limit_settings, which this build refuses: stays 0). */
  readonly pending_requests: Gauge;
  readonly rate_limit_enforced: Counter;

  constructor(root: Scope) {
    const scope = root.scope('control_plane');
    // This epoch's own connection, not the sum with its parent's: Envoy's NeverImport.
    this.connected_state = scope.gauge('connected_state', 'never_import');
    this.pending_requests = scope.gauge('pending_requests');
    this.rate_limit_enforced = scope.counter('rate_limit_enforced');
  }
}

// The connection manager's tracing statistics, under `http.<stat_prefix>.tracing.` as in Envoy:
// one counter per reason a request was or was not traced.

import type { Counter, Scope } from '../stats/stats';
import { TracingReason } from './tracing_decision';

export class ConnectionManagerTracingStats {
  readonly client_enabled: Counter;
  readonly health_check: Counter;
  readonly not_traceable: Counter;
  readonly random_sampling: Counter;
  readonly service_forced: Counter;

  /** @param scope the connection manager's, `http.<stat_prefix>` */
  constructor(scope: Scope) {
    const tracing = scope.scope('tracing');
    this.client_enabled = tracing.counter('client_enabled');
    this.health_check = tracing.counter('health_check');
    this.not_traceable = tracing.counter('not_traceable');
    this.random_sampling = tracing.counter('random_sampling');
    this.service_forced = tracing.counter('service_forced');
  }

  charge(reason: TracingReason): void {
    switch (reason) {
      case TracingReason.ClientForced:
        this.client_enabled.inc();
        break;
      case TracingReason.ServiceForced:
        this.service_forced.inc();
        break;
      case TracingReason.Sampling:
        this.random_sampling.inc();
        break;
      case TracingReason.HealthCheck:
        this.health_check.inc();
        break;
      default:
        this.not_traceable.inc();
    }
  }
}

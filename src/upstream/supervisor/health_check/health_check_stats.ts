// `cluster.<stat_name>.health_check.*`, Envoy's ALL_HEALTH_CHECKER_STATS. Made when the checker
// is, so /stats lists them at 0 for a health-checked cluster from the start.

import type { Counter, Gauge, Scope } from '../../../stats/stats';

export interface HealthCheckStats {
  readonly attempt: Counter;
  readonly success: Counter;
  readonly failure: Counter;
  readonly networkFailure: Counter;
  /** Nothing reports passive failures to the active checker yet: stays 0, as in Envoy without one. */
  readonly passiveFailure: Counter;
  readonly verifyCluster: Counter;
  readonly healthy: Gauge;
  readonly degraded: Gauge;
}

export function healthCheckStats(cluster: Scope): HealthCheckStats {
  const scope = cluster.scope('health_check');
  return {
    attempt: scope.counter('attempt'),
    success: scope.counter('success'),
    failure: scope.counter('failure'),
    networkFailure: scope.counter('network_failure'),
    passiveFailure: scope.counter('passive_failure'),
    verifyCluster: scope.counter('verify_cluster'),
    healthy: scope.gauge('healthy'),
    degraded: scope.gauge('degraded'),
  };
}

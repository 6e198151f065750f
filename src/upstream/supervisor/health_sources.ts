// The supervisor's judges of host health, asked once per cluster in this order: active health
// checking and outlier detection each own their HealthFlag bits.

import { ActiveHealthChecking } from './health_check/active_health_checking';
import type { HealthCheckerFactory } from './health_check/health_checkers';
import { outlierDetectionFactory } from './outlier/detector';
import type { HealthSourceFactory } from './supervisor_cluster_manager';

/** @param checkers the kinds of active health check this build runs (the registry's) */
export function healthSources(checkers: readonly HealthCheckerFactory[]): readonly HealthSourceFactory[] {
  return [new ActiveHealthChecking(checkers), outlierDetectionFactory()];
}

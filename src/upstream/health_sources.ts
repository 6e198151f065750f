// The supervisor's judges of host health, asked once per cluster in this order: active health
// checking and outlier detection each own their HealthFlag bits.

import { ActiveHealthChecking } from './health_check/active_health_checking';
import { outlierDetectionFactory } from './outlier/detector';
import type { HealthSourceFactory } from './supervisor_cluster_manager';

export const HEALTH_SOURCES: readonly HealthSourceFactory[] = [new ActiveHealthChecking(), outlierDetectionFactory()];

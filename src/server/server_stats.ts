// The `server.*` statistics the supervisor owns. Per-epoch facts are never_import gauges so a
// later epoch does not add its parent's value; connection and memory figures accumulate.

import type { Counter, Gauge, Histogram, Scope, StatsStore } from '../stats/stats';
import { STATS_OVERFLOW } from '../stats/store';

export interface ServerStats {
  readonly live: Gauge;
  readonly state: Gauge;
  readonly uptime: Gauge;
  readonly concurrency: Gauge;
  readonly version: Gauge;
  readonly hotRestartEpoch: Gauge;
  readonly hotRestartGeneration: Gauge;
  readonly parentConnections: Gauge;
  readonly memoryAllocated: Gauge;
  readonly memoryHeapSize: Gauge;
  /** The supervisor's resident set: what its memory costs the machine. */
  readonly memoryPhysicalSize: Gauge;
  readonly totalConnections: Gauge;
  /** The fewest days until a loaded certificate expires (Envoy's INT_MAX without any). */
  readonly daysUntilFirstCertExpiring: Gauge;
  readonly workerRestarts: Counter;
  /** Distinct unknown fields of the bootstrap, accepted with --allow-unknown-static-fields. */
  readonly staticUnknownFields: Counter;
  /** Distinct unknown fields of dynamic (xDS) configuration, accepted unless rejected. */
  readonly dynamicUnknownFields: Counter;
  /** Stats created while serving that found no room in shared memory (kept in their process). */
  readonly statsOverflow: Counter;
  /** From the supervisor's start to serving (Envoy's: to the workers' start). */
  readonly initializationTimeMs: Histogram;
  /** Lookups of a stat by name string since the last clear, every process of this epoch (see RecentLookups). */
  readonly statsRecentLookups: Gauge;
  readonly failures: FailureCounters;
}

/** Envoy's ASSERT and ENVOY_BUG outcomes: internal failures caught and survived (see caught_failures.ts). */
export interface FailureCounters {
  readonly debugAssertionFailures: Counter;
  readonly proxyBugFailures: Counter;
}

/** Every process counts its own failures and lookups into these. */
export function failureCounters(store: Scope): FailureCounters {
  const server = store.scope('server');
  return { debugAssertionFailures: server.counter('debug_assertion_failures'), proxyBugFailures: server.counter('proxy_bug_failures') };
}

/** Each process of the epoch sets its own lookups' total; the gauge reads their sum. */
export function statsRecentLookupsGauge(store: Scope): Gauge {
  return store.scope('server').gauge('stats_recent_lookups', 'never_import');
}

export function serverStats(store: StatsStore): ServerStats {
  const server = store.scope('server');
  return {
    live: server.gauge('live', 'never_import'),
    state: server.gauge('state', 'never_import'),
    uptime: server.gauge('uptime', 'never_import'),
    concurrency: server.gauge('concurrency', 'never_import'),
    version: server.gauge('version', 'never_import'),
    hotRestartEpoch: server.gauge('hot_restart_epoch', 'never_import'),
    // Each epoch sets parent's generation + 1; only the newest epoch's value is reported.
    hotRestartGeneration: server.gauge('hot_restart_generation', 'never_import'),
    // The newest epoch sets it from the connections its parents still hold.
    parentConnections: server.gauge('parent_connections', 'never_import'),
    memoryAllocated: server.gauge('memory_allocated'),
    memoryHeapSize: server.gauge('memory_heap_size'),
    memoryPhysicalSize: server.gauge('memory_physical_size'),
    totalConnections: server.gauge('total_connections'),
    daysUntilFirstCertExpiring: server.gauge('days_until_first_cert_expiring', 'never_import'),
    workerRestarts: server.counter('worker_restarts'),
    staticUnknownFields: server.counter('static_unknown_fields'),
    dynamicUnknownFields: server.counter('dynamic_unknown_fields'),
    statsOverflow: store.counter(STATS_OVERFLOW),
    initializationTimeMs: server.histogram('initialization_time_ms', 'milliseconds'),
    statsRecentLookups: statsRecentLookupsGauge(store),
    failures: failureCounters(store),
  };
}

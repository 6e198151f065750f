// The configuration is what the workers can build: before a supervisor binds or forks anything,
// and in `--mode validate`, every cluster and every listener's filter chain is built from the
// model by the constructors a worker runs, then dropped. Nothing is opened: the stats are only
// named, the clusters have no hosts (membership is the supervisor's, found later), nothing is served.

import { inConfigFile } from '../config/errors';
import type { Bootstrap } from '../config/model';
import { nodeLocality } from '../config/node_overrides';
import { SystemClock } from '../common/clock';
import { dataPlaneFactories } from '../extensions/data_plane_extensions';
import { NetworkFilterBuilder } from '../listener/network_filter_builder';
import { ConnectionIds } from '../log/connection_log';
import type { LoggerFactory } from '../log/logger_api';
import { LiveRuntime } from '../runtime/live_runtime';
import { NamingStatsStore } from '../stats/naming_store';
import { SecretStore } from '../tls/secret_store';
import { ClusterManager } from '../upstream/worker/cluster_manager';
import { RouteConfigUpdates } from '../filters/network/http_connection_manager/route_config_updates';
import { neverDrain } from './drain_decider';
import { OverloadState } from '../overload/overload_state';

/** @throws ConfigError of `file` at the field of the first cluster or listener a worker could not build */
export function constructDataPlane(bootstrap: Bootstrap, file: string, log: LoggerFactory): void {
  inConfigFile(file, () => buildDataPlane(bootstrap, log));
}

/** The same, for a bootstrap an LDS listener stands in. @throws FieldError at the field a worker could not build */
export function buildDataPlane(bootstrap: Bootstrap, log: LoggerFactory): void {
  const stats = new NamingStatsStore();
  const runtime = new LiveRuntime([]);
  // The static secrets only: a context waiting for SDS is checked when its secrets come.
  const secrets = new SecretStore(bootstrap.secrets);
  const clusters = new ClusterManager({
    configs: bootstrap.clusters,
    snapshots: [],
    store: stats,
    runtime,
    localClusterName: bootstrap.localClusterName,
    localLocality: nodeLocality(bootstrap.node),
    log,
    secrets,
    buildEachOnce: true,
  });
  const filters = new NetworkFilterBuilder({
    bootstrap,
    stats,
    clusters,
    log,
    ids: ConnectionIds.forOneProcess(),
    drain: neverDrain,
    overload: new OverloadState(),
    runtime,
    healthCheckFailed: () => false,
    clock: new SystemClock(),
    // Validated with the configuration; opened by the workers.
    accessLogs: null,
    // RDS brings nothing here: each connection manager with rds builds its empty configuration.
    routeConfigs: new RouteConfigUpdates([]),
    secrets,
    ...dataPlaneFactories(),
  });
  try {
    bootstrap.listeners.forEach((_, i) => filters.listenerFilter(i));
  } finally {
    filters.close();
  }
}

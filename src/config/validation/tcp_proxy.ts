// The TCP proxy network filter (envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy).

import { FieldError } from '../errors';
import { childPath } from '../field_path';
import { JsonObject, stringField } from '../json';
import { validateAccessLogs } from './access_logs';
import { requireNonNegativeDuration } from './durations';

/** @param config the filter's typed_config, at `path` */
export function validateTcpProxy(config: JsonObject, path: string, clusters: ReadonlySet<string>): void {
  if (config['weighted_clusters'] !== undefined) {
    throw new FieldError(childPath(path, 'weighted_clusters'), 'weighted_clusters is not supported yet; use cluster');
  }
  // The protos require a stat_prefix and one of cluster and weighted_clusters (proto_rules.ts).
  const cluster = stringField(config, 'cluster');
  if (!clusters.has(cluster)) {
    throw new FieldError(childPath(path, 'cluster'), `tcp_proxy: unknown cluster '${cluster}'`);
  }
  requireNonNegativeDuration(config, 'idle_timeout', path);
  validateAccessLogs(config, path);
}

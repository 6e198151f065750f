// The TCP proxy network filter (envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy).

import { FieldError } from '../errors';
import { childPath } from '../field_path';
import { JsonObject, stringField } from '../json';
import { requireNonNegativeDuration } from './durations';

/** @param config the filter's typed_config, at `path` */
export function validateTcpProxy(config: JsonObject, path: string, clusters: ReadonlySet<string>): void {
  if (stringField(config, 'stat_prefix') === '') {
    throw new FieldError(childPath(path, 'stat_prefix'), 'missing required field');
  }
  if (config['weighted_clusters'] !== undefined) {
    throw new FieldError(childPath(path, 'weighted_clusters'), 'weighted_clusters is not supported yet; use cluster');
  }
  const cluster = stringField(config, 'cluster');
  if (cluster === '') throw new FieldError(childPath(path, 'cluster'), 'missing required field');
  if (!clusters.has(cluster)) {
    throw new FieldError(childPath(path, 'cluster'), `tcp_proxy: unknown cluster '${cluster}'`);
  }
  requireNonNegativeDuration(config, 'idle_timeout', path);
}

// proxy.filters.network.tcp_proxy (src/filters/network/tcp_proxy.ts): TcpProxy's fields this
// build acts on, its rules beyond the protos', its model and its factory.

import type { ExtensionDescriptor } from '../../config/extension';
import { FieldError } from '../../config/errors';
import { childPath } from '../../config/field_path';
import { JsonObject, stringField } from '../../config/json';
import type { TcpProxyConfig } from '../../config/model';
import { millis } from '../../config/model_builder';
import { CONFIG_TYPES, TCP_PROXY } from '../../config/names';
import { leaf } from '../../config/shape';
import { requireNonNegativeDuration } from '../../config/validation/durations';
import { ACCESS_LOG_LIST, accessLogsModel, validateAccessLogs } from '../access_loggers/access_log_list';
import type { DataPlaneFactories } from '../data_plane_factories';

/** Envoy's default idle_timeout: 1 hour. */
const IDLE_TIMEOUT_MS = 60 * 60 * 1000;

export const TCP_PROXY_FILTER: ExtensionDescriptor<'proxy.filters.network', DataPlaneFactories['proxy.filters.network']> = {
  category: 'proxy.filters.network',
  name: TCP_PROXY,
  aliases: ['envoy.tcp_proxy'],
  configType: CONFIG_TYPES.tcpProxy,
  shape: { fields: { stat_prefix: leaf, cluster: leaf, idle_timeout: leaf, access_log: ACCESS_LOG_LIST } },
  validate: (config, path, context) => {
    validateTcpProxy(config, path, context.clusters);
    validateAccessLogs(config, path, context);
  },
  model: (config, { extensions }): TcpProxyConfig => ({
    kind: 'tcp_proxy',
    name: TCP_PROXY,
    statPrefix: stringField(config, 'stat_prefix'),
    cluster: stringField(config, 'cluster'),
    idleTimeoutMs: millis(config, 'idle_timeout', IDLE_TIMEOUT_MS),
    accessLogs: accessLogsModel(config, extensions),
  }),
  factory: {
    create: (config: TcpProxyConfig, { stats, clusters, bufferLimitBytes, accessLogs, filterContext }) => {
      const { TcpProxyFactory } = require('../../filters/network/tcp_proxy') as typeof import('../../filters/network/tcp_proxy');
      return new TcpProxyFactory(config, { stats, clusters, bufferLimitBytes, accessLogs: accessLogs(config.accessLogs), clock: filterContext.clock });
    },
  },
};

/** @param clusters the names of the static clusters */
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
}

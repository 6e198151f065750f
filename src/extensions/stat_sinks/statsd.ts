// proxy.stat_sinks.statsd (Envoy's envoy.stat_sinks.statsd, formerly envoy.statsd): statsd lines
// of every stat by its full name, to a UDP address or over TCP through a static cluster
// (src/stats/sinks). Envoy's factory requires the cluster to be a static one and the node to
// have an identity (checked once the command line's --service-* overrides are known).

import type { ExtensionDescriptor, ValidationContext } from '../../config/extension';
import { FieldError } from '../../config/errors';
import { childPath } from '../../config/field_path';
import { type JsonObject, messageField, stringField } from '../../config/json';
import type { StatsdSinkConfig } from '../../config/model';
import { socketAddress } from '../../config/model_builder';
import { CONFIG_TYPES, STATSD_SINK } from '../../config/names';
import { leaf } from '../../config/shape';
import type { ExtensionFactories } from '../extension_factories';
import { createStatsdSink, DEFAULT_STATSD_PREFIX, STATSD_ADDRESS, validateStatsdAddress } from './statsd_family';

export const STATSD: ExtensionDescriptor<'proxy.stats_sinks', ExtensionFactories['proxy.stats_sinks']> = {
  category: 'proxy.stats_sinks',
  name: STATSD_SINK,
  aliases: ['envoy.statsd'],
  configType: CONFIG_TYPES.statsdSink,
  shape: { fields: { address: STATSD_ADDRESS, tcp_cluster_name: leaf, prefix: leaf } },
  validate: validateStatsd,
  model: statsdModel,
  factory: createStatsdSink,
};

function validateStatsd(config: JsonObject, path: string, context: ValidationContext): void {
  const address = messageField(config, 'address');
  if (address !== undefined) return validateStatsdAddress(address, childPath(path, 'address'));
  const cluster = stringField(config, 'tcp_cluster_name');
  const clusterPath = childPath(path, 'tcp_cluster_name');
  // The protos require one of the two when typed_config is set; without it, the config is empty.
  if (cluster === '') throw new FieldError(childPath(path, 'statsd_specifier'), 'is required: set one of address, tcp_cluster_name');
  if (!context.clusters.has(cluster)) throw new FieldError(clusterPath, `tcp statsd: unknown cluster '${cluster}'`);
  if (!context.plaintextClusters.has(cluster)) {
    throw new FieldError(clusterPath, `tcp statsd: cluster '${cluster}' has a transport socket: TLS to a statsd server is not supported by this build (it would be plaintext)`);
  }
}

function statsdModel(config: JsonObject): StatsdSinkConfig {
  const address = messageField(config, 'address');
  return {
    kind: 'statsd',
    name: STATSD_SINK,
    target: address !== undefined ? { kind: 'udp', address: socketAddress(address) } : { kind: 'tcp', clusterName: stringField(config, 'tcp_cluster_name') },
    prefix: stringField(config, 'prefix') || DEFAULT_STATSD_PREFIX,
    tagged: false,
    maxBytesPerDatagram: 0,
  };
}

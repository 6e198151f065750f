// proxy.stat_sinks.dog_statsd (Envoy's envoy.stat_sinks.dog_statsd, formerly envoy.dog_statsd):
// DogStatsD lines, each stat by its tag-extracted name with its tags, to a UDP address, gathered
// into datagrams of up to max_bytes_per_datagram (src/stats/sinks).

import type { ExtensionDescriptor } from '../../config/extension';
import { FieldError } from '../../config/errors';
import { childPath } from '../../config/field_path';
import { type JsonObject, messageField, numberField, stringField } from '../../config/json';
import type { StatsdSinkConfig } from '../../config/model';
import { socketAddress } from '../../config/model_builder';
import { CONFIG_TYPES, DOG_STATSD_SINK } from '../../config/names';
import { leaf } from '../../config/shape';
import type { ExtensionFactories } from '../extension_factories';
import { createStatsdSink, DEFAULT_STATSD_PREFIX, STATSD_ADDRESS, validateStatsdAddress } from './statsd_family';

export const DOG_STATSD: ExtensionDescriptor<'proxy.stats_sinks', ExtensionFactories['proxy.stats_sinks']> = {
  category: 'proxy.stats_sinks',
  name: DOG_STATSD_SINK,
  aliases: ['envoy.dog_statsd'],
  configType: CONFIG_TYPES.dogStatsdSink,
  shape: { fields: { address: STATSD_ADDRESS, prefix: leaf, max_bytes_per_datagram: leaf } },
  validate: validateDogStatsd,
  model: dogStatsdModel,
  factory: createStatsdSink,
};

function validateDogStatsd(config: JsonObject, path: string): void {
  const address = messageField(config, 'address');
  // The protos require it when typed_config is set; without it, the config is empty.
  if (address === undefined) throw new FieldError(childPath(path, 'dog_statsd_specifier'), 'is required: set one of address');
  validateStatsdAddress(address, childPath(path, 'address'));
}

function dogStatsdModel(config: JsonObject): StatsdSinkConfig {
  return {
    kind: 'statsd',
    name: DOG_STATSD_SINK,
    target: { kind: 'udp', address: socketAddress(messageField(config, 'address') ?? {}) },
    prefix: stringField(config, 'prefix') || DEFAULT_STATSD_PREFIX,
    tagged: true,
    maxBytesPerDatagram: numberField(config, 'max_bytes_per_datagram'),
  };
}

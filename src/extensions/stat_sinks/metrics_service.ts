// proxy.stat_sinks.metrics_service (Envoy's envoy.stat_sinks.metrics_service, formerly
// envoy.metrics_service): every stat streamed to a gRPC MetricsService (src/stats/sinks), through
// a static cluster (envoy_grpc) or a target the gRPC library resolves (google_grpc), in plaintext
// HTTP/2 as the xDS client speaks it. Envoy 1.16's fields; emit_tags_as_labels and
// histogram_emit_mode came later and stay refused.

import type { ExtensionDescriptor, ValidationContext } from '../../config/extension';
import { GRPC_SERVICE } from '../../config/common_shapes';
import { effectiveApiVersion, grpcTargetOf, type XdsApiVersion } from '../../config/config_source';
import { FieldError } from '../../config/errors';
import { childPath } from '../../config/field_path';
import { boolField, enumField, type JsonObject, messageField, stringField } from '../../config/json';
import type { MetricsServiceSinkConfig } from '../../config/model';
import { CONFIG_TYPES, METRICS_SERVICE_SINK } from '../../config/names';
import { leaf } from '../../config/shape';
import type { ExtensionFactories } from '../extension_factories';

export const METRICS_SERVICE: ExtensionDescriptor<'proxy.stats_sinks', ExtensionFactories['proxy.stats_sinks']> = {
  category: 'proxy.stats_sinks',
  name: METRICS_SERVICE_SINK,
  aliases: ['envoy.metrics_service'],
  configType: CONFIG_TYPES.metricsService,
  shape: { fields: { grpc_service: GRPC_SERVICE, transport_api_version: leaf, report_counters_as_deltas: leaf } },
  validate: validateMetricsService,
  model: metricsServiceModel,
  factory: (model, context) => {
    // The registry hands this factory the models this descriptor built.
    const config = model as MetricsServiceSinkConfig;
    const { GrpcChannel } = require('../../config/xds/grpc_channel') as typeof import('../../config/xds/grpc_channel');
    const { MetricsServiceSink, STREAM_METRICS_PATHS } = require('../../stats/sinks/metrics_service_sink') as typeof import('../../stats/sinks/metrics_service_sink');
    return new MetricsServiceSink(
      new GrpcChannel(config.target, context.clusterAddresses),
      STREAM_METRICS_PATHS[effectiveApiVersion(config.transportApiVersion)],
      { countersAsDeltas: config.reportCountersAsDeltas, buckets: (name) => context.histogramBuckets.boundsFor(name).values },
      context.schema,
      context.node,
      context.log,
    );
  },
};

function validateMetricsService(config: JsonObject, path: string, context: ValidationContext): void {
  const service = messageField(config, 'grpc_service');
  const servicePath = childPath(path, 'grpc_service');
  // The protos require it when typed_config is set; without it, the config is empty.
  if (service === undefined) throw new FieldError(servicePath, 'value is required');
  const envoyGrpc = messageField(service, 'envoy_grpc');
  if (envoyGrpc === undefined) return;
  const cluster = stringField(envoyGrpc, 'cluster_name');
  const clusterPath = childPath(childPath(servicePath, 'envoy_grpc'), 'cluster_name');
  // Envoy's gRPC client takes a static cluster only.
  if (!context.clusters.has(cluster)) throw new FieldError(clusterPath, `Unknown gRPC client cluster '${cluster}'`);
  if (!context.plaintextClusters.has(cluster)) {
    throw new FieldError(clusterPath, `cluster '${cluster}' has a transport socket: TLS to a metrics service is not supported by this build (it would be plaintext)`);
  }
}

function metricsServiceModel(config: JsonObject): MetricsServiceSinkConfig {
  return {
    kind: 'metrics_service',
    name: METRICS_SERVICE_SINK,
    target: grpcTargetOf(messageField(config, 'grpc_service') ?? {}),
    transportApiVersion: enumField<XdsApiVersion>(config, 'transport_api_version', 'AUTO'),
    reportCountersAsDeltas: boolField(config, 'report_counters_as_deltas'),
  };
}

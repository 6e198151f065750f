// proxy.tracers.zipkin (src/tracing/zipkin/): spans reported as Zipkin v2 JSON to a collector
// cluster. collector_endpoint_version must say HTTP_JSON: its default (Zipkin's v1 JSON, which
// Envoy 1.16 deprecated and refuses in a v3 configuration) and HTTP_PROTO are not sent by this
// build, and Envoy 1.16 has no GRPC reporter either.

import type { ExtensionDescriptor } from '../../config/extension';
import { FieldError } from '../../config/errors';
import { childPath } from '../../config/field_path';
import { boolField, type JsonObject, stringField } from '../../config/json';
import type { ZipkinTracerConfig } from '../../config/model';
import { CONFIG_TYPES, ZIPKIN_TRACER } from '../../config/names';
import { leaf } from '../../config/shape';
import type { DataPlaneFactories } from '../data_plane_factories';

const REFUSED_VERSIONS: Readonly<Record<string, string>> = {
  DEPRECATED_AND_UNAVAILABLE_DO_NOT_USE: "Zipkin's v1 JSON (Envoy 1.16's HTTP_JSON_V1, the default, deprecated) is not implemented by this build: set HTTP_JSON",
  HTTP_PROTO: 'Zipkin protobuf reports are not implemented by this build: set HTTP_JSON',
  GRPC: 'gRPC reports are implemented neither by Envoy 1.16 nor by this build: set HTTP_JSON',
};

export const ZIPKIN: ExtensionDescriptor<'proxy.tracers', DataPlaneFactories['proxy.tracers']> = {
  category: 'proxy.tracers',
  name: ZIPKIN_TRACER,
  aliases: ['envoy.zipkin'],
  configType: CONFIG_TYPES.zipkin,
  // split_spans_for_request is newer than Envoy 1.16.
  shape: {
    fields: {
      collector_cluster: leaf,
      collector_endpoint: leaf,
      trace_id_128bit: leaf,
      shared_span_context: leaf,
      collector_endpoint_version: leaf,
      collector_hostname: leaf,
    },
  },
  /** The protos require the cluster and the endpoint. */
  validate(config: JsonObject, path: string, context): void {
    const version = stringField(config, 'collector_endpoint_version') || 'DEPRECATED_AND_UNAVAILABLE_DO_NOT_USE';
    const refusal = REFUSED_VERSIONS[version];
    if (refusal !== undefined) throw new FieldError(childPath(path, 'collector_endpoint_version'), refusal);
    const cluster = stringField(config, 'collector_cluster');
    // As Envoy 1.16 checks it when it builds the tracer, before any CDS cluster has come.
    if (!context.clusters.has(cluster)) throw new FieldError(childPath(path, 'collector_cluster'), `${ZIPKIN_TRACER}: unknown cluster '${cluster}'`);
  },
  model: (config): ZipkinTracerConfig => {
    const cluster = stringField(config, 'collector_cluster');
    return {
      kind: 'zipkin',
      name: ZIPKIN_TRACER,
      collectorCluster: cluster,
      collectorEndpoint: stringField(config, 'collector_endpoint'),
      collectorHostname: stringField(config, 'collector_hostname') || cluster,
      traceId128Bit: boolField(config, 'trace_id_128bit'),
      sharedSpanContext: boolField(config, 'shared_span_context', true),
    };
  },
  factory: (config, context) => {
    const { ZipkinTracer } = require('../../tracing/zipkin/zipkin_tracer') as typeof import('../../tracing/zipkin/zipkin_tracer');
    return new ZipkinTracer(config, context);
  },
};

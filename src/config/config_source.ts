// core.v3.ConfigSource as the xDS client (xds/) reads it: where a subscription's resources come
// from (a file, a management server over gRPC or REST, or the ADS stream), with Envoy's
// defaults. Part of the model (cds_config, eds_cluster_config), which workers load too.

import { boolField, durationMs, enumField, type JsonObject, messageField, messageList, stringField, stringList } from './json';

/** resource_api_version / transport_api_version. AUTO is V2 in Envoy 1.16. */
export type XdsApiVersion = 'AUTO' | 'V2' | 'V3';

/** A core.v3.GrpcService target: a cluster of the bootstrap, or a URI handed to the gRPC library. */
export type GrpcTarget =
  | { readonly kind: 'envoy_grpc'; readonly clusterName: string }
  | { readonly kind: 'google_grpc'; readonly targetUri: string; readonly statPrefix: string };

export interface ApiConfigSource {
  readonly apiType: 'GRPC' | 'REST' | 'DELTA_GRPC';
  readonly transportApiVersion: XdsApiVersion;
  /** GRPC: the management servers, the first one used (Envoy 1.16 reads only that one). */
  readonly grpcServices: readonly GrpcTarget[];
  /** REST: the clusters that serve the REST API; Envoy 1.16 takes exactly one. */
  readonly clusterNames: readonly string[];
  /** REST: how often the resources are fetched again. */
  readonly refreshDelayMs: number;
  /** REST: how long one fetch may take. */
  readonly requestTimeoutMs: number;
  /** GRPC: the node is sent on the first request of a stream only. */
  readonly setNodeOnFirstMessageOnly: boolean;
}

interface ConfigSourceBase {
  /** How long the first update may take before the subscriber goes on without it; 0: forever. */
  readonly initialFetchTimeoutMs: number;
  readonly resourceApiVersion: XdsApiVersion;
}

export type ConfigSourceConfig =
  | (ConfigSourceBase & { readonly kind: 'path'; readonly path: string })
  | (ConfigSourceBase & { readonly kind: 'api'; readonly api: ApiConfigSource })
  | (ConfigSourceBase & { readonly kind: 'ads' });

/** Envoy's initial_fetch_timeout default. */
const DEFAULT_INITIAL_FETCH_TIMEOUT_MS = 15_000;
/** Envoy's ApiConfigSource.request_timeout default. */
const DEFAULT_REQUEST_TIMEOUT_MS = 1_000;

/** A ConfigSource as the protos decode it (validation has checked its specifier is set). */
export function configSourceOf(config: JsonObject): ConfigSourceConfig {
  const base: ConfigSourceBase = {
    initialFetchTimeoutMs: durationMs(config, 'initial_fetch_timeout') ?? DEFAULT_INITIAL_FETCH_TIMEOUT_MS,
    resourceApiVersion: enumField<XdsApiVersion>(config, 'resource_api_version', 'AUTO'),
  };
  if (typeof config['path'] === 'string') return { ...base, kind: 'path', path: config['path'] };
  const api = messageField(config, 'api_config_source');
  if (api !== undefined) return { ...base, kind: 'api', api: apiConfigSourceOf(api) };
  return { ...base, kind: 'ads' };
}

export function apiConfigSourceOf(config: JsonObject): ApiConfigSource {
  return {
    apiType: enumField<ApiConfigSource['apiType']>(config, 'api_type', 'GRPC'),
    transportApiVersion: enumField<XdsApiVersion>(config, 'transport_api_version', 'AUTO'),
    grpcServices: messageList(config, 'grpc_services').map(grpcTargetOf),
    clusterNames: stringList(config, 'cluster_names'),
    refreshDelayMs: durationMs(config, 'refresh_delay') ?? 0,
    requestTimeoutMs: durationMs(config, 'request_timeout') ?? DEFAULT_REQUEST_TIMEOUT_MS,
    setNodeOnFirstMessageOnly: boolField(config, 'set_node_on_first_message_only'),
  };
}

/** A core.v3.GrpcService (validation has checked its target is set). */
export function grpcTargetOf(service: JsonObject): GrpcTarget {
  const envoyGrpc = messageField(service, 'envoy_grpc');
  if (envoyGrpc !== undefined) return { kind: 'envoy_grpc', clusterName: stringField(envoyGrpc, 'cluster_name') };
  const googleGrpc = messageField(service, 'google_grpc') ?? {};
  return { kind: 'google_grpc', targetUri: stringField(googleGrpc, 'target_uri'), statPrefix: stringField(googleGrpc, 'stat_prefix') };
}

/** V2 for AUTO and V2, as Envoy 1.16 reads them. */
export function effectiveApiVersion(version: XdsApiVersion): 'V2' | 'V3' {
  return version === 'V3' ? 'V3' : 'V2';
}

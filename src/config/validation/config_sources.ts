// Config sources (core.v3.ConfigSource) and the bootstrap's ads_config, with Envoy 1.16's
// load-time messages: an API config source names exactly what its type needs, and the cluster
// it names is one of the bootstrap's static, non-EDS clusters (the management server must be
// reachable before anything is discovered). Pure.

import { FieldError } from '../errors';
import { childPath, indexPath } from '../field_path';
import { type JsonObject, enumField, messageField, messageList, stringField, stringList } from '../json';

/** What a config source may refer to in the bootstrap. */
export interface ConfigSourceContext {
  /** The static clusters that are not EDS, by name. */
  readonly primaryClusters: ReadonlyMap<string, JsonObject>;
  readonly hasAdsConfig: boolean;
}

export function configSourceContext(bootstrap: JsonObject): ConfigSourceContext {
  const clusters = messageList(messageField(bootstrap, 'static_resources') ?? {}, 'clusters');
  const primary = clusters.filter((cluster) => enumField(cluster, 'type', 'STATIC') !== 'EDS');
  return {
    primaryClusters: new Map(primary.map((cluster) => [stringField(cluster, 'name'), cluster])),
    hasAdsConfig: messageField(messageField(bootstrap, 'dynamic_resources') ?? {}, 'ads_config') !== undefined,
  };
}

/** @throws FieldError at the config source (`path`) or the field in it that Envoy refuses */
export function validateConfigSource(source: JsonObject, path: string, context: ConfigSourceContext): void {
  if (source['ads'] !== undefined && !context.hasAdsConfig) {
    throw new FieldError(childPath(path, 'ads'), 'ADS must be configured to support an ADS config source');
  }
  const api = messageField(source, 'api_config_source');
  if (api === undefined) return;
  const apiPath = childPath(path, 'api_config_source');
  validateApiConfigSourceNames(api, apiPath);
  const clusterNames = stringList(api, 'cluster_names');
  const service = messageList(api, 'grpc_services')[0];
  const envoyGrpc = service && messageField(service, 'envoy_grpc');
  const [name, namePath] =
    clusterNames.length > 0
      ? [clusterNames[0]!, indexPath(childPath(apiPath, 'cluster_names'), 0)]
      : envoyGrpc !== undefined
        ? [stringField(envoyGrpc, 'cluster_name'), childPath(envoyGrpcPath(apiPath), 'cluster_name')]
        : [null, ''];
  if (name === null) return;
  const cluster = context.primaryClusters.get(name);
  if (cluster === undefined) {
    throw new FieldError(
      namePath,
      `ApiConfigSource must have a statically defined non-EDS cluster: '${name}' does not exist, was added via api, or is an EDS cluster`,
    );
  }
  checkPlaintext(cluster, name, namePath);
}

/** dynamic_resources.ads_config: a gRPC source whose envoy_grpc cluster is a static one. */
export function validateDynamicResources(bootstrap: JsonObject, context: ConfigSourceContext): void {
  const resources = messageField(bootstrap, 'dynamic_resources') ?? {};
  const cds = messageField(resources, 'cds_config');
  if (cds !== undefined) validateConfigSource(cds, 'dynamic_resources.cds_config', context);
  const lds = messageField(resources, 'lds_config');
  if (lds !== undefined) validateConfigSource(lds, 'dynamic_resources.lds_config', context);
  const ads = messageField(resources, 'ads_config');
  if (ads === undefined) return;
  const path = 'dynamic_resources.ads_config';
  validateApiConfigSourceNames(ads, path);
  if (enumField(ads, 'api_type', 'GRPC') === 'REST') throw new FieldError(childPath(path, 'api_type'), 'ApiConfigSource type must be gRPC');
  const service = messageList(ads, 'grpc_services')[0];
  const envoyGrpc = service && messageField(service, 'envoy_grpc');
  if (envoyGrpc === undefined) return;
  const name = stringField(envoyGrpc, 'cluster_name');
  const namePath = childPath(envoyGrpcPath(path), 'cluster_name');
  const cluster = context.primaryClusters.get(name);
  if (cluster === undefined) throw new FieldError(namePath, `Unknown gRPC client cluster '${name}'`);
  checkPlaintext(cluster, name, namePath);
}

function envoyGrpcPath(apiPath: string): string {
  return childPath(indexPath(childPath(apiPath, 'grpc_services'), 0), 'envoy_grpc');
}

/** Envoy's checkApiConfigSourceNames. */
function validateApiConfigSourceNames(api: JsonObject, path: string): void {
  const apiType = enumField(api, 'api_type', 'GRPC');
  const clusterNames = stringList(api, 'cluster_names');
  const services = messageList(api, 'grpc_services');
  if (clusterNames.length === 0 && services.length === 0) {
    throw new FieldError(path, 'API configs must have either a gRPC service or a cluster name defined');
  }
  if (apiType === 'GRPC' || apiType === 'DELTA_GRPC') {
    if (clusterNames.length > 0) throw new FieldError(childPath(path, 'cluster_names'), 'ApiConfigSource::(DELTA_)GRPC must not have a cluster name specified');
    if (services.length > 1) throw new FieldError(childPath(path, 'grpc_services'), 'ApiConfigSource::(DELTA_)GRPC must have a single gRPC service specified');
    return;
  }
  if (services.length > 0) throw new FieldError(childPath(path, 'grpc_services'), 'ApiConfigSource, if not a gRPC type, must not have a gRPC service specified');
  if (clusterNames.length !== 1) throw new FieldError(childPath(path, 'cluster_names'), 'ApiConfigSource must have a singleton cluster name specified');
  if (api['refresh_delay'] === undefined) throw new FieldError(childPath(path, 'refresh_delay'), 'refresh_delay is required for REST API configuration sources');
}

/** Whether connections to the cluster go through a transport socket of its own (TLS, say). */
export function hasTransportSocket(cluster: JsonObject): boolean {
  return cluster['transport_socket'] !== undefined || cluster['transport_socket_matches'] !== undefined;
}

/** The xDS client speaks plaintext HTTP/2; a cluster that asks for TLS is refused rather than ignored. */
function checkPlaintext(cluster: JsonObject, name: string, path: string): void {
  if (hasTransportSocket(cluster)) {
    throw new FieldError(path, `cluster '${name}' has a transport socket: TLS to a management server is not supported by this build (it would be plaintext)`);
  }
}

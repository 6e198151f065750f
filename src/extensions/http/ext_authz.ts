// proxy.filters.http.ext_authz (src/filters/http/ext_authz.ts): the fields of ExtAuthz and of
// ExtAuthzPerRoute that Envoy 1.16 has and this build honours (later ones, google_grpc and a
// gRPC service's initial_metadata are refused by the capability check), the rules Envoy adds to
// the protos', the model, and the client of the configured service.

import { utf8Bytes } from '../../common/byte_string';
import { RUNTIME_FRACTION, STRING_MATCHER } from '../../config/common_shapes';
import { atField, FieldError } from '../../config/errors';
import type { ExtensionDescriptor } from '../../config/extension';
import { childPath, indexPath } from '../../config/field_path';
import { boolField, JsonObject, messageField, messageList, numberField, stringField, stringList } from '../../config/json';
import type { ExtAuthzConfig, ExtAuthzGrpcService, ExtAuthzHttpService, ExtAuthzPerRouteConfig, StringMatch } from '../../config/model';
import { millis, runtimeFraction } from '../../config/model_builder';
import { CONFIG_TYPES, EXT_AUTHZ, proxySpelling } from '../../config/names';
import { protoSchema } from '../../config/schema';
import { leaf, list, type Shape } from '../../config/shape';
import { stringMatch, validateStringMatchers } from '../../config/string_match_model';
import type { AuthzClient } from '../../filters/http/ext_authz_client';
import { parseHeaderFormat } from '../../filters/http/header_format';
import type { HttpFilterFactoryContext } from '../../filters/http/http_filter_registry';
import type { DataPlaneFactories } from '../data_plane_factories';
import { errorStatus } from './error_status';

const LIST_STRING_MATCHER: Shape = { fields: { patterns: list(STRING_MATCHER) } };

const EXT_AUTHZ_SHAPE: Shape = {
  fields: {
    grpc_service: { fields: { envoy_grpc: { fields: { cluster_name: leaf } }, timeout: leaf } },
    http_service: {
      fields: {
        server_uri: { fields: { uri: leaf, cluster: leaf, timeout: leaf } },
        path_prefix: leaf,
        authorization_request: { fields: { allowed_headers: LIST_STRING_MATCHER, headers_to_add: list({ fields: { key: leaf, value: leaf } }) } },
        authorization_response: {
          fields: { allowed_upstream_headers: LIST_STRING_MATCHER, allowed_upstream_headers_to_append: LIST_STRING_MATCHER, allowed_client_headers: LIST_STRING_MATCHER },
        },
      },
    },
    transport_api_version: leaf,
    failure_mode_allow: leaf,
    with_request_body: { fields: { max_request_bytes: leaf, allow_partial_message: leaf } },
    clear_route_cache: leaf,
    status_on_error: { fields: { code: leaf } },
    metadata_context_namespaces: leaf,
    filter_enabled: RUNTIME_FRACTION,
    deny_at_disable: { fields: { default_value: leaf, runtime_key: leaf } },
    include_peer_certificate: leaf,
  },
};

const EXT_AUTHZ_PER_ROUTE: Shape = { fields: { disabled: leaf, check_settings: { fields: { context_extensions: leaf } } } };

/** Envoy's ext_authz timeout when the service sets none. */
const DEFAULT_TIMEOUT_MS = 200;
const FORBIDDEN = 403;
const STRING_MATCHER_FIELDS = ['allowed_upstream_headers', 'allowed_upstream_headers_to_append', 'allowed_client_headers'] as const;

export const EXT_AUTHZ_FILTER: ExtensionDescriptor<'proxy.filters.http', DataPlaneFactories['proxy.filters.http']> = {
  category: 'proxy.filters.http',
  name: EXT_AUTHZ,
  aliases: ['envoy.ext_authz'],
  configType: CONFIG_TYPES.extAuthz,
  shape: EXT_AUTHZ_SHAPE,
  validate: validateExtAuthz,
  model: (config) => ({ name: EXT_AUTHZ, extAuthz: extAuthz(config) }),
  factory: (config, context) => {
    if (config.extAuthz === undefined) return null;
    const { ExtAuthzFilterFactory } = require('../../filters/http/ext_authz') as typeof import('../../filters/http/ext_authz');
    return new ExtAuthzFilterFactory(config.extAuthz, context, authzClient(config.extAuthz, context));
  },
  perRoute: { configType: CONFIG_TYPES.extAuthzPerRoute, shape: EXT_AUTHZ_PER_ROUTE, model: extAuthzPerRoute },
};

/**
 * One service is required (Envoy 1.16 aborts on a config without); the matchers' regexes must
 * compile; headers_to_add takes literal values only.
 */
function validateExtAuthz(config: JsonObject, path: string): void {
  const http = messageField(config, 'http_service');
  if (http === undefined && messageField(config, 'grpc_service') === undefined) {
    throw new FieldError(childPath(path, 'grpc_service'), 'an authorization service is required: grpc_service or http_service');
  }
  if (http === undefined) return;
  const httpPath = childPath(path, 'http_service');
  const request = messageField(http, 'authorization_request') ?? {};
  const requestPath = childPath(httpPath, 'authorization_request');
  validateStringMatchers(messageField(request, 'allowed_headers') ?? {}, 'patterns', childPath(requestPath, 'allowed_headers'));
  messageList(request, 'headers_to_add').forEach((header, i) => {
    const valuePath = childPath(indexPath(childPath(requestPath, 'headers_to_add'), i), 'value');
    const value = atField(valuePath, () => parseHeaderFormat(stringField(header, 'value')));
    // The check request is made without the stream context a %VARIABLE% prints from.
    if (value.literal === null) throw new FieldError(valuePath, 'only literal text is supported here by this build (a %VARIABLE% needs the stream context the check request is made without)');
  });
  const response = messageField(http, 'authorization_response') ?? {};
  const responsePath = childPath(httpPath, 'authorization_response');
  for (const field of STRING_MATCHER_FIELDS) validateStringMatchers(messageField(response, field) ?? {}, 'patterns', childPath(responsePath, field));
}

function extAuthz(config: JsonObject): ExtAuthzConfig {
  const body = messageField(config, 'with_request_body');
  const filterEnabled = messageField(config, 'filter_enabled');
  const denyAtDisable = messageField(config, 'deny_at_disable');
  const http = messageField(config, 'http_service');
  return {
    service: http !== undefined ? httpService(http) : grpcService(config),
    failureModeAllow: boolField(config, 'failure_mode_allow'),
    withRequestBody: body === undefined ? null : { maxRequestBytes: numberField(body, 'max_request_bytes'), allowPartialMessage: boolField(body, 'allow_partial_message') },
    clearRouteCache: boolField(config, 'clear_route_cache'),
    statusOnError: errorStatus(messageField(config, 'status_on_error'), FORBIDDEN),
    metadataContextNamespaces: stringList(config, 'metadata_context_namespaces').map(proxySpelling),
    ...(filterEnabled !== undefined ? { filterEnabled: runtimeFraction(filterEnabled) } : {}),
    ...(denyAtDisable !== undefined ? { denyAtDisable: { defaultValue: boolField(denyAtDisable, 'default_value'), runtimeKey: stringField(denyAtDisable, 'runtime_key') } } : {}),
    includePeerCertificate: boolField(config, 'include_peer_certificate'),
  };
}

function httpService(config: JsonObject): ExtAuthzHttpService {
  const uri = messageField(config, 'server_uri') ?? {};
  const request = messageField(config, 'authorization_request') ?? {};
  const response = messageField(config, 'authorization_response') ?? {};
  const headersToAdd: string[] = [];
  for (const header of messageList(request, 'headers_to_add')) {
    // Validation admitted literal values only; an empty value adds nothing (Envoy's HeaderParser).
    const value = parseHeaderFormat(stringField(header, 'value')).literal!;
    if (value !== '') headersToAdd.push(stringField(header, 'key').toLowerCase(), value);
  }
  return {
    kind: 'http',
    cluster: stringField(uri, 'cluster'),
    timeoutMs: millis(uri, 'timeout', DEFAULT_TIMEOUT_MS),
    pathPrefix: utf8Bytes(stringField(config, 'path_prefix')),
    allowedHeaders: matchers(request, 'allowed_headers'),
    headersToAdd,
    allowedUpstreamHeaders: matchers(response, 'allowed_upstream_headers'),
    allowedUpstreamHeadersToAppend: matchers(response, 'allowed_upstream_headers_to_append'),
    allowedClientHeaders: matchers(response, 'allowed_client_headers'),
  };
}

function matchers(config: JsonObject, field: string): StringMatch[] {
  return messageList(messageField(config, field) ?? {}, 'patterns').map(stringMatch);
}

function grpcService(config: JsonObject): ExtAuthzGrpcService {
  const grpc = messageField(config, 'grpc_service') ?? {};
  return {
    kind: 'grpc',
    clusterName: stringField(messageField(grpc, 'envoy_grpc') ?? {}, 'cluster_name'),
    timeoutMs: millis(grpc, 'timeout', DEFAULT_TIMEOUT_MS),
    // AUTO meant V2 in Envoy 1.16.
    apiVersion: stringField(config, 'transport_api_version') === 'V3' ? 'V3' : 'V2',
  };
}

function extAuthzPerRoute(config: JsonObject): ExtAuthzPerRouteConfig {
  const settings = messageField(config, 'check_settings') ?? {};
  const extensions = messageField(settings, 'context_extensions') ?? {};
  return {
    disabled: boolField(config, 'disabled'),
    contextExtensions: Object.fromEntries(Object.entries(extensions).map(([key, value]) => [key, String(value)])),
  };
}

function authzClient(config: ExtAuthzConfig, context: HttpFilterFactoryContext): AuthzClient {
  const service = config.service;
  const { GrpcAuthzClient, HttpAuthzClient } = require('../../filters/http/ext_authz_client') as typeof import('../../filters/http/ext_authz_client');
  if (service.kind === 'http') return new HttpAuthzClient(service, context.clusters, context.asyncClient);
  const root = protoSchema().root;
  return new GrpcAuthzClient(service, context.clusters, context.asyncClient, {
    request: root.lookupType('envoy.service.auth.v3.CheckRequest'),
    response: root.lookupType('envoy.service.auth.v3.CheckResponse'),
    statusCodes: root.lookupEnum('envoy.type.v3.StatusCode').values,
  });
}

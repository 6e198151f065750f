// proxy.filters.http.ratelimit (src/filters/http/ratelimit.ts): the fields of Envoy 1.16's
// RateLimit and RateLimitPerRoute (the later ones are refused by the capability check), and
// their models. The descriptors come from the route configuration's rate_limits
// (src/config/rate_limit_policy.ts).

import type { ExtensionDescriptor } from '../../config/extension';
import { boolField, enumField, JsonObject, messageField, messageList, numberField, stringField } from '../../config/json';
import type { RateLimitFilterConfig, RateLimitPerRouteConfig, RateLimitServiceConfig } from '../../config/model';
import { millis } from '../../config/model_builder';
import { CONFIG_TYPES, RATELIMIT } from '../../config/names';
import { leaf, list, refused, Shape } from '../../config/shape';
import type { DataPlaneFactories } from '../data_plane_factories';

/** Envoy 1.16's default for `timeout`. */
const DEFAULT_TIMEOUT_MS = 20;

// The service as the worker's gRPC client reaches it: envoy_grpc, with initial_metadata.
const RATE_LIMIT_SERVICE: Shape = {
  fields: {
    grpc_service: {
      fields: {
        envoy_grpc: { fields: { cluster_name: leaf } },
        initial_metadata: list({ fields: { key: leaf, value: leaf } }),
        timeout: refused("is not read by Envoy 1.16's rate limit filter, whose own `timeout` bounds each call (set that instead)"),
      },
    },
    transport_api_version: leaf,
  },
};

const RATE_LIMIT: Shape = {
  fields: {
    domain: leaf,
    stage: leaf,
    request_type: leaf,
    timeout: leaf,
    failure_mode_deny: leaf,
    rate_limited_as_resource_exhausted: leaf,
    rate_limit_service: RATE_LIMIT_SERVICE,
    enable_x_ratelimit_headers: leaf,
    disable_x_envoy_ratelimited_header: refused('came after Envoy 1.16 (1.17): as in 1.16, every 429 of this filter carries x-proxy-ratelimited'),
  },
};

// Envoy 1.16's RateLimitPerRoute; override_option, rate_limits and domain are newer.
const RATE_LIMIT_PER_ROUTE: Shape = { fields: { vh_rate_limits: leaf } };

export const RATELIMIT_FILTER: ExtensionDescriptor<'proxy.filters.http', DataPlaneFactories['proxy.filters.http']> = {
  category: 'proxy.filters.http',
  name: RATELIMIT,
  aliases: ['envoy.rate_limit'],
  configType: CONFIG_TYPES.rateLimit,
  shape: RATE_LIMIT,
  model: (config) => ({ name: RATELIMIT, rateLimit: rateLimitConfig(config) }),
  factory: (config, context) => {
    if (config.rateLimit === undefined) return null;
    const { RateLimitFilterFactory } = require('../../filters/http/ratelimit') as typeof import('../../filters/http/ratelimit');
    return new RateLimitFilterFactory(config.rateLimit, context);
  },
  perRoute: { configType: CONFIG_TYPES.rateLimitPerRoute, shape: RATE_LIMIT_PER_ROUTE, model: rateLimitPerRoute },
};

/** The protos require domain and rate_limit_service (with its grpc_service's target), and bound stage. */
function rateLimitConfig(config: JsonObject): RateLimitFilterConfig {
  const requestType = stringField(config, 'request_type');
  return {
    domain: stringField(config, 'domain'),
    stage: numberField(config, 'stage'),
    requestType: requestType === 'internal' || requestType === 'external' ? requestType : 'both',
    timeoutMs: millis(config, 'timeout', DEFAULT_TIMEOUT_MS),
    failureModeDeny: boolField(config, 'failure_mode_deny'),
    rateLimitedAsResourceExhausted: boolField(config, 'rate_limited_as_resource_exhausted'),
    service: rateLimitService(messageField(config, 'rate_limit_service') ?? {}),
    xRateLimitHeaders: enumField(config, 'enable_x_ratelimit_headers', 'OFF') === 'DRAFT_VERSION_03',
  };
}

function rateLimitService(config: JsonObject): RateLimitServiceConfig {
  const grpcService = messageField(config, 'grpc_service') ?? {};
  const initialMetadata = messageList(grpcService, 'initial_metadata').flatMap((header) => [stringField(header, 'key').toLowerCase(), stringField(header, 'value')]);
  return {
    clusterName: stringField(messageField(grpcService, 'envoy_grpc') ?? {}, 'cluster_name'),
    initialMetadata,
    // Envoy 1.16 calls v2's method unless told V3 (AUTO is v2 there).
    apiVersion: enumField(config, 'transport_api_version', 'AUTO') === 'V3' ? 'V3' : 'V2',
  };
}

function rateLimitPerRoute(config: JsonObject): RateLimitPerRouteConfig {
  return { vhRateLimits: enumField<RateLimitPerRouteConfig['vhRateLimits']>(config, 'vh_rate_limits', 'OVERRIDE') };
}

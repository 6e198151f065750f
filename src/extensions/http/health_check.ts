// proxy.filters.http.health_check (src/filters/http/health_check.ts): HealthCheck's fields this
// build acts on, the rules Envoy's factory adds to the protos' (pass_through_mode required,
// header names, Percent in 0..100: proto_rules.ts), and its model.

import type { ExtensionDescriptor } from '../../config/extension';
import { HEADER_MATCHER, headerMatch, validateHeaderMatcher } from '../../config/header_matcher';
import { FieldError } from '../../config/errors';
import { childPath, indexPath } from '../../config/field_path';
import { boolField, durationMs, JsonObject, messageField, messageList, numberField } from '../../config/json';
import type { HealthCheckConfig } from '../../config/model';
import { millis } from '../../config/model_builder';
import { CONFIG_TYPES, HEALTH_CHECK } from '../../config/names';
import { leaf, list } from '../../config/shape';
import { requireNonNegativeDuration } from '../../config/validation/durations';
import type { DataPlaneFactories } from '../data_plane_factories';

export const HEALTH_CHECK_FILTER: ExtensionDescriptor<'proxy.filters.http', DataPlaneFactories['proxy.filters.http']> = {
  category: 'proxy.filters.http',
  name: HEALTH_CHECK,
  aliases: ['envoy.health_check'],
  configType: CONFIG_TYPES.healthCheck,
  shape: { fields: { pass_through_mode: leaf, cache_time: leaf, cluster_min_healthy_percentages: leaf, headers: list(HEADER_MATCHER) } },
  validate: validateHealthCheck,
  model: (config) => ({ name: HEALTH_CHECK, healthCheck: healthCheck(config) }),
  factory: (config, context) => {
    if (config.healthCheck === undefined) return null;
    const { HealthCheckFilterFactory } = require('../../filters/http/health_check') as typeof import('../../filters/http/health_check');
    return new HealthCheckFilterFactory(config.healthCheck, context);
  },
};

function validateHealthCheck(config: JsonObject, path: string): void {
  requireNonNegativeDuration(config, 'cache_time', path);
  // Envoy's factory: a cache only makes sense for answers that come from upstream.
  if (!boolField(config, 'pass_through_mode') && (durationMs(config, 'cache_time') ?? 0) >= 1) {
    throw new FieldError(childPath(path, 'cache_time'), 'cache_time must not be set when pass_through_mode is disabled');
  }
  messageList(config, 'headers').forEach((matcher, i) => validateHeaderMatcher(matcher, indexPath(childPath(path, 'headers'), i)));
}

function healthCheck(config: JsonObject): HealthCheckConfig {
  const passThroughMode = boolField(config, 'pass_through_mode');
  const percentages = messageField(config, 'cluster_min_healthy_percentages') ?? {};
  return {
    passThroughMode,
    cacheTimeMs: millis(config, 'cache_time', 0),
    // Envoy reads the percentages only when it answers health checks itself.
    clusterMinHealthyPercentages: passThroughMode
      ? {}
      : Object.fromEntries(Object.keys(percentages).map((cluster) => [cluster, numberField(messageField(percentages, cluster) ?? {}, 'value')])),
    headers: messageList(config, 'headers').map(headerMatch),
  };
}


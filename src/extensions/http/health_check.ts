// proxy.filters.http.health_check (src/filters/http/health_check.ts): HealthCheck's fields this
// build acts on, the rules Envoy's factory adds to the protos' (pass_through_mode required,
// header names, Percent in 0..100: proto_rules.ts), and its model.

import type { ExtensionDescriptor } from '../../config/extension';
import { REGEX_MATCHER } from '../../config/common_shapes';
import { FieldError } from '../../config/errors';
import { childPath, indexPath } from '../../config/field_path';
import { boolField, durationMs, JsonObject, messageField, messageList, numberField, stringField } from '../../config/json';
import type { HeaderMatch, HealthCheckConfig } from '../../config/model';
import { millis } from '../../config/model_builder';
import { CONFIG_TYPES, HEALTH_CHECK } from '../../config/names';
import { leaf, list, Shape } from '../../config/shape';
import { requireNonNegativeDuration } from '../../config/validation/durations';
import { compileRegexMatcher } from '../../config/validation/stats_config';
import { HealthCheckFilterFactory } from '../../filters/http/health_check';
import type { ExtensionFactories } from '../extension_factories';

// HeaderMatcher as Envoy 1.16 has it; later additions (contains_match, string_match, ...) are refused.
const HEADER_MATCHER: Shape = {
  fields: {
    name: leaf,
    exact_match: leaf,
    safe_regex_match: REGEX_MATCHER,
    range_match: { fields: { start: leaf, end: leaf } },
    present_match: leaf,
    prefix_match: leaf,
    suffix_match: leaf,
    invert_match: leaf,
  },
};

const INT64 = /^-?\d+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

export const HEALTH_CHECK_FILTER: ExtensionDescriptor<'proxy.filters.http', ExtensionFactories['proxy.filters.http']> = {
  category: 'proxy.filters.http',
  name: HEALTH_CHECK,
  aliases: ['envoy.health_check'],
  configType: CONFIG_TYPES.healthCheck,
  shape: { fields: { pass_through_mode: leaf, cache_time: leaf, cluster_min_healthy_percentages: leaf, headers: list(HEADER_MATCHER) } },
  validate: validateHealthCheck,
  model: (config) => ({ name: HEALTH_CHECK, healthCheck: healthCheck(config) }),
  factory: (config, context) => (config.healthCheck === undefined ? null : new HealthCheckFilterFactory(config.healthCheck, context)),
};

function validateHealthCheck(config: JsonObject, path: string): void {
  requireNonNegativeDuration(config, 'cache_time', path);
  // Envoy's factory: a cache only makes sense for answers that come from upstream.
  if (!boolField(config, 'pass_through_mode') && (durationMs(config, 'cache_time') ?? 0) >= 1) {
    throw new FieldError(childPath(path, 'cache_time'), 'cache_time must not be set when pass_through_mode is disabled');
  }
  messageList(config, 'headers').forEach((matcher, i) => validateHeaderMatcher(matcher, indexPath(childPath(path, 'headers'), i)));
}

function validateHeaderMatcher(matcher: JsonObject, path: string): void {
  const regex = messageField(matcher, 'safe_regex_match');
  if (regex !== undefined) compileRegexMatcher(regex, childPath(path, 'safe_regex_match'));
  const range = messageField(matcher, 'range_match');
  if (range !== undefined) {
    for (const key of ['start', 'end']) {
      const value = String(range[key] ?? '0');
      if (!INT64.test(value) || BigInt(value) < INT64_MIN || BigInt(value) > INT64_MAX) {
        throw new FieldError(childPath(childPath(path, 'range_match'), key), `'${value}' is not an int64`);
      }
    }
  }
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

/** Validation left at most one specifier set; none means "present", as in Envoy. */
function headerMatch(config: JsonObject): HeaderMatch {
  const name = stringField(config, 'name').toLowerCase();
  const invert = boolField(config, 'invert_match');
  const regex = messageField(config, 'safe_regex_match');
  const range = messageField(config, 'range_match');
  let specifier: HeaderMatch['specifier'];
  if (regex !== undefined) specifier = { kind: 'safe_regex', regex: stringField(regex, 'regex') };
  else if (range !== undefined) specifier = { kind: 'range', start: int64Field(range, 'start'), end: int64Field(range, 'end') };
  else if (typeof config['exact_match'] === 'string') specifier = { kind: 'exact', value: config['exact_match'] };
  else if (typeof config['prefix_match'] === 'string') specifier = { kind: 'prefix', value: config['prefix_match'] };
  else if (typeof config['suffix_match'] === 'string') specifier = { kind: 'suffix', value: config['suffix_match'] };
  else specifier = { kind: 'present' };
  return { name, invert, specifier };
}

/** An int64 field in decimal; ProtoJSON writes 64-bit integers as strings. */
function int64Field(config: JsonObject, key: string): string {
  const value = config[key];
  return typeof value === 'string' || typeof value === 'number' ? String(value) : '0';
}

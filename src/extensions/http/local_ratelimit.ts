// proxy.filters.http.local_ratelimit (src/filters/http/local_ratelimit.ts): the fields of
// LocalRateLimit that Envoy 1.16 has (the later ones are refused by the capability check), the
// rules Envoy's FilterConfig adds to the protos', and its model. The same message is its
// typed_config and its typed_per_filter_config entry, where a token bucket is required.

import { HEADER_VALUE_OPTION, RUNTIME_FRACTION } from '../../config/common_shapes';
import type { ExtensionDescriptor } from '../../config/extension';
import { FieldError } from '../../config/errors';
import { childPath, indexPath } from '../../config/field_path';
import { JsonObject, messageField, numberField, stringField } from '../../config/json';
import type { LocalRateLimitConfig } from '../../config/model';
import { millis, runtimeFraction } from '../../config/model_builder';
import { CONFIG_TYPES, LOCAL_RATELIMIT } from '../../config/names';
import { leaf, list, Shape } from '../../config/shape';
import { parseHeaderFormat } from '../../filters/http/header_format';
import { removeHeaders } from '../../http/message';
import type { DataPlaneFactories } from '../data_plane_factories';
import { errorStatus } from './error_status';
import { headerValueOptions, validateHeaderValueOptions } from './header_value_options';

const LOCAL_RATE_LIMIT: Shape = {
  fields: {
    stat_prefix: leaf,
    status: { fields: { code: leaf } },
    token_bucket: { fields: { max_tokens: leaf, tokens_per_fill: leaf, fill_interval: leaf } },
    filter_enabled: RUNTIME_FRACTION,
    filter_enforced: RUNTIME_FRACTION,
    response_headers_to_add: list(HEADER_VALUE_OPTION),
  },
};

/** Envoy's shortest fill_interval (its fill timer's). */
const MIN_FILL_INTERVAL_MS = 50;
/** Envoy's local reply sets these after response_headers_to_add, in their place. */
const REPLY_OWN_HEADERS: ReadonlySet<string> = new Set(['content-type', 'content-length']);
const TOO_MANY_REQUESTS = 429;

export const LOCAL_RATELIMIT_FILTER: ExtensionDescriptor<'proxy.filters.http', DataPlaneFactories['proxy.filters.http']> = {
  category: 'proxy.filters.http',
  name: LOCAL_RATELIMIT,
  configType: CONFIG_TYPES.localRateLimit,
  shape: LOCAL_RATE_LIMIT,
  validate: validateLocalRateLimit,
  model: (config) => ({ name: LOCAL_RATELIMIT, localRateLimit: localRateLimit(config) }),
  factory: (config, context) => {
    if (config.localRateLimit === undefined) return null;
    const { LocalRateLimitFilterFactory } = require('../../filters/http/local_ratelimit') as typeof import('../../filters/http/local_ratelimit');
    return new LocalRateLimitFilterFactory(config.localRateLimit, context);
  },
  perRoute: {
    configType: CONFIG_TYPES.localRateLimit,
    shape: LOCAL_RATE_LIMIT,
    validate: (config, path) => {
      // Envoy's words: a route's limit without a bucket would limit nothing.
      if (messageField(config, 'token_bucket') === undefined) throw new FieldError(childPath(path, 'token_bucket'), 'local rate limit token bucket must be set for per filter configs');
      validateLocalRateLimit(config, path);
    },
    model: localRateLimit,
  },
};

/** The protos require stat_prefix and a bucket's fields; Envoy's filter, a fill timer of 50 ms or more. */
function validateLocalRateLimit(config: JsonObject, path: string): void {
  const bucket = messageField(config, 'token_bucket');
  if (bucket !== undefined && millis(bucket, 'fill_interval', 0) < MIN_FILL_INTERVAL_MS) {
    throw new FieldError(childPath(childPath(path, 'token_bucket'), 'fill_interval'), `local rate limit token bucket fill timer must be >= ${MIN_FILL_INTERVAL_MS}ms`);
  }
  validateHeaderValueOptions(config, 'response_headers_to_add', path).forEach((value, i) => {
    // The reply is made with no request context to print a variable from.
    if (value.literal !== null) return;
    const valuePath = childPath(childPath(indexPath(childPath(path, 'response_headers_to_add'), i), 'header'), 'value');
    throw new FieldError(valuePath, 'only literal text is supported here by this build (a %VARIABLE% needs the stream context the local reply is made without)');
  });
}

function localRateLimit(config: JsonObject): LocalRateLimitConfig {
  const bucket = messageField(config, 'token_bucket');
  const filterEnabled = messageField(config, 'filter_enabled');
  const filterEnforced = messageField(config, 'filter_enforced');
  return {
    statPrefix: stringField(config, 'stat_prefix'),
    status: errorStatus(messageField(config, 'status'), TOO_MANY_REQUESTS),
    // Without a bucket Envoy's has no tokens and no fill timer.
    tokenBucket:
      bucket === undefined
        ? { maxTokens: 0, tokensPerFill: 1, fillIntervalMs: 0 }
        : { maxTokens: numberField(bucket, 'max_tokens'), tokensPerFill: numberField(bucket, 'tokens_per_fill', 1), fillIntervalMs: millis(bucket, 'fill_interval', 0) },
    ...(filterEnabled !== undefined ? { filterEnabled: runtimeFraction(filterEnabled) } : {}),
    ...(filterEnforced !== undefined ? { filterEnforced: runtimeFraction(filterEnforced) } : {}),
    responseHeaders: replyHeaders(config),
  };
}

/** response_headers_to_add applied to an empty list, as Envoy's HeaderParser applies it to the reply. */
function replyHeaders(config: JsonObject): string[] {
  const headers: string[] = [];
  for (const option of headerValueOptions(config, 'response_headers_to_add')) {
    // Validation admitted literal values only.
    const value = parseHeaderFormat(option.value).literal!;
    if (value === '' || REPLY_OWN_HEADERS.has(option.name)) continue;
    if (!option.append) removeHeaders(headers, (name) => name === option.name);
    headers.push(option.name, value);
  }
  return headers;
}

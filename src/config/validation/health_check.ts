// proxy.filters.http.health_check's typed_config: the rules Envoy's factory adds to the protos'
// (pass_through_mode required, header names, Percent in 0..100: proto_rules.ts).

import { FieldError } from '../errors';
import { childPath, indexPath } from '../field_path';
import { boolField, durationMs, JsonObject, messageField, messageList } from '../json';
import { requireNonNegativeDuration } from './durations';
import { compileRegexMatcher } from './stats_config';

const INT64 = /^-?\d+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** @param config the filter's typed_config, at `path` */
export function validateHealthCheck(config: JsonObject, path: string): void {
  requireNonNegativeDuration(config, 'cache_time', path);
  // Envoy's factory: a cache only makes sense for answers that come from upstream.
  if (!boolField(config, 'pass_through_mode') && (durationMs(config, 'cache_time') ?? 0) >= 1) {
    throw new FieldError(childPath(path, 'cache_time'), 'cache_time must not be set when pass_through_mode is disabled');
  }
  messageList(config, 'headers').forEach((matcher, i) => validateHeaderMatcher(matcher, indexPath(childPath(path, 'headers'), i)));
}

export function validateHeaderMatcher(matcher: JsonObject, path: string): void {
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

// proxy.filters.http.health_check's typed_config: the protos' rules (pass_through_mode required,
// HeaderMatcher names and patterns, Percent in 0..100) and the one Envoy's factory adds.

import { FieldError } from '../errors';
import { childPath, indexPath } from '../field_path';
import { boolField, durationMs, isJsonObject, JsonObject, messageField, messageList, numberField, stringField } from '../json';
import { requireNonNegativeDuration } from './durations';
import { compileRegexMatcher } from './stats_config';

const INT64 = /^-?\d+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** @param config the filter's typed_config, at `path` */
export function validateHealthCheck(config: JsonObject, path: string): void {
  if (config['pass_through_mode'] === undefined || config['pass_through_mode'] === null) {
    throw new FieldError(childPath(path, 'pass_through_mode'), 'missing required field');
  }
  requireNonNegativeDuration(config, 'cache_time', path);
  // Envoy's factory: a cache only makes sense for answers that come from upstream.
  if (!boolField(config, 'pass_through_mode') && (durationMs(config, 'cache_time') ?? 0) >= 1) {
    throw new FieldError(childPath(path, 'cache_time'), 'cache_time must not be set when pass_through_mode is disabled');
  }
  messageList(config, 'headers').forEach((matcher, i) => validateHeaderMatcher(matcher, indexPath(childPath(path, 'headers'), i)));
  const percentages = messageField(config, 'cluster_min_healthy_percentages') ?? {};
  for (const [cluster, percent] of Object.entries(percentages)) {
    const at = childPath(childPath(path, 'cluster_min_healthy_percentages'), cluster);
    const value = isJsonObject(percent) ? numberField(percent, 'value') : NaN;
    if (!(value >= 0 && value <= 100)) throw new FieldError(childPath(at, 'value'), `must be within 0..100, got ${String(value)}`);
  }
}

function validateHeaderMatcher(matcher: JsonObject, path: string): void {
  const name = stringField(matcher, 'name');
  // PGV HTTP_HEADER_NAME, not strict: not empty, and no NUL, CR or LF.
  if (name === '') throw new FieldError(childPath(path, 'name'), 'missing required field');
  if (/[\0\r\n]/.test(name)) throw new FieldError(childPath(path, 'name'), `'${JSON.stringify(name)}' is not a valid header name`);
  for (const kind of ['prefix_match', 'suffix_match']) {
    if (matcher[kind] === '') throw new FieldError(childPath(path, kind), 'must not be empty');
  }
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

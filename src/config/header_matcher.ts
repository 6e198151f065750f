// Envoy 1.16's HeaderMatcher (config.route.v3.HeaderMatcher), as the health_check filter and the
// access log header filter configure it: its fields, its rules beyond the protos' and its model.

import { REGEX_MATCHER } from './common_shapes';
import { FieldError } from './errors';
import { childPath } from './field_path';
import { boolField, JsonObject, messageField, stringField } from './json';
import type { HeaderMatch } from './model';
import { leaf, Shape } from './shape';
import { compileRegexMatcher } from './validation/stats_config';

// HeaderMatcher as Envoy 1.16 has it; later additions (contains_match, string_match, ...) are refused.
export const HEADER_MATCHER: Shape = {
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

/** Validation left at most one specifier set; none means "present", as in Envoy. */
export function headerMatch(config: JsonObject): HeaderMatch {
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

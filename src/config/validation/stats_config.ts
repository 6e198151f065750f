// The bootstrap's stats_config: Envoy's rules on tag specifiers (a name used once, a name-only
// specifier naming a default rule) and the protos' rules on histogram buckets.

import { isDefaultTagName } from '../../stats/default_tags';
import { InvalidRegexError, SafeRegex } from '../../regex/safe_regex';
import { FieldError } from '../errors';
import { childPath, indexPath } from '../field_path';
import { boolField, JsonObject, messageField, messageList, stringField } from '../json';
import { proxySpelling } from '../names';

/** Envoy's limit on a config regex's compiled program when google_re2 names none. */
const DEFAULT_MAX_PROGRAM_SIZE = 100;

const PATH = 'stats_config';

export function validateStatsConfig(bootstrap: JsonObject): void {
  const config = messageField(bootstrap, 'stats_config');
  if (config === undefined) return;
  validateStatsTags(config);
  messageList(config, 'histogram_bucket_settings').forEach((rule, i) =>
    validateBucketRule(rule, indexPath(childPath(PATH, 'histogram_bucket_settings'), i)),
  );
}

function validateStatsTags(config: JsonObject): void {
  const useDefaults = boolField(config, 'use_all_default_tags', true);
  const seen = new Set<string>();
  messageList(config, 'stats_tags').forEach((tag, i) => {
    const path = indexPath(childPath(PATH, 'stats_tags'), i);
    const written = stringField(tag, 'tag_name');
    const name = proxySpelling(written);
    if (name === '') throw new FieldError(childPath(path, 'tag_name'), 'tag_name cannot be empty');
    if (seen.has(name) || (useDefaults && isDefaultTagName(name))) {
      throw new FieldError(childPath(path, 'tag_name'), `Tag name '${written}' specified twice.`);
    }
    seen.add(name);
    const hasValue = typeof tag['fixed_value'] === 'string' || stringField(tag, 'regex') !== '';
    if (!hasValue && !isDefaultTagName(name)) {
      throw new FieldError(path, `No regex specified for tag specifier and no default regex for name: '${written}'`);
    }
  });
}

function validateBucketRule(rule: JsonObject, path: string): void {
  const match = messageField(rule, 'match');
  if (match === undefined) throw new FieldError(childPath(path, 'match'), 'missing required field');
  validateStringMatch(match, childPath(path, 'match'));
  const buckets = Array.isArray(rule['buckets']) ? rule['buckets'].map(Number) : [];
  if (buckets.length === 0) throw new FieldError(childPath(path, 'buckets'), 'at least one bucket is required');
  const seen = new Set<number>();
  buckets.forEach((bound, i) => {
    const at = indexPath(childPath(path, 'buckets'), i);
    if (!Number.isFinite(bound) || bound <= 0) throw new FieldError(at, `must be a number greater than 0, got ${bound}`);
    if (seen.has(bound)) throw new FieldError(at, `bucket ${bound} is listed twice`);
    seen.add(bound);
  });
}

/** PGV: one of the patterns is required, and prefix, suffix and contains are not empty. */
function validateStringMatch(match: JsonObject, path: string): void {
  const set = ['exact', 'prefix', 'suffix', 'contains', 'safe_regex'].filter((k) => match[k] !== undefined);
  if (set.length === 0) throw new FieldError(path, 'one of exact, prefix, suffix, contains or safe_regex is required');
  for (const kind of ['prefix', 'suffix', 'contains']) {
    if (match[kind] === '') throw new FieldError(childPath(path, kind), 'must not be empty');
  }
  const regex = messageField(match, 'safe_regex');
  if (regex !== undefined) compileRegexMatcher(regex, childPath(path, 'safe_regex'));
}

/** Envoy's RegexMatcher: RE2 syntax, within google_re2.max_program_size (100 when unset). */
export function compileRegexMatcher(matcher: JsonObject, path: string): SafeRegex {
  const pattern = stringField(matcher, 'regex');
  const google = messageField(matcher, 'google_re2');
  const max = google?.['max_program_size'];
  try {
    return SafeRegex.compile(pattern, { maxProgramSize: max === undefined || max === null ? DEFAULT_MAX_PROGRAM_SIZE : Number(max) });
  } catch (e) {
    if (e instanceof InvalidRegexError) throw new FieldError(childPath(path, 'regex'), `invalid regex '${pattern}': ${e.reason}`);
    throw e;
  }
}

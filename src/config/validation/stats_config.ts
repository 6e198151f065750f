// The bootstrap's stats_config: Envoy's rules on tag specifiers (a name used once, a name-only
// specifier naming a default rule) and on histogram bucket rules beyond the protos' (required
// match and buckets, buckets above 0 and distinct: proto_rules.ts).

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
  const matchPath = childPath(path, 'match');
  const regex = messageField(messageField(rule, 'match') ?? {}, 'safe_regex');
  if (regex !== undefined) compileRegexMatcher(regex, childPath(matchPath, 'safe_regex'));
  // Infinity is a double the protos let through; a bucket bound must be a number.
  const buckets = Array.isArray(rule['buckets']) ? rule['buckets'].map(Number) : [];
  buckets.forEach((bound, i) => {
    if (!Number.isFinite(bound)) throw new FieldError(indexPath(childPath(path, 'buckets'), i), `must be a finite number, got ${bound}`);
  });
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

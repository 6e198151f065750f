// type.matcher.v3.StringMatcher in the model, and the rule the protos cannot say of a list of
// them: shared by every config message that embeds them.

import { childPath, indexPath } from './field_path';
import { boolField, JsonObject, messageField, messageList, stringField } from './json';
import type { StringMatch } from './model';
import { compileRegexMatcher } from './validation/stats_config';

const STRING_MATCH_KINDS = ['exact', 'prefix', 'suffix', 'contains'] as const;

/** Validation left exactly one of the kinds set. */
export function stringMatch(config: JsonObject): StringMatch {
  const ignoreCase = boolField(config, 'ignore_case');
  const regex = messageField(config, 'safe_regex');
  if (regex !== undefined) return { kind: 'safe_regex', value: stringField(regex, 'regex'), ignoreCase };
  const kind = STRING_MATCH_KINDS.find((k) => typeof config[k] === 'string') ?? 'exact';
  return { kind, value: stringField(config, kind), ignoreCase };
}

/** `config[field]`, a list of StringMatchers at `path`: each regex compiles. */
export function validateStringMatchers(config: JsonObject, field: string, path: string): void {
  messageList(config, field).forEach((matcher, i) => {
    const regex = messageField(matcher, 'safe_regex');
    if (regex !== undefined) compileRegexMatcher(regex, childPath(indexPath(childPath(path, field), i), 'safe_regex'));
  });
}

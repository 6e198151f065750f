// type.matcher.v3.StringMatcher in the model: shared by every config message that embeds one.

import { boolField, JsonObject, messageField, stringField } from './json';
import type { StringMatch } from './model';

const STRING_MATCH_KINDS = ['exact', 'prefix', 'suffix', 'contains'] as const;

/** Validation left exactly one of the kinds set. */
export function stringMatch(config: JsonObject): StringMatch {
  const ignoreCase = boolField(config, 'ignore_case');
  const regex = messageField(config, 'safe_regex');
  if (regex !== undefined) return { kind: 'safe_regex', value: stringField(regex, 'regex'), ignoreCase };
  const kind = STRING_MATCH_KINDS.find((k) => typeof config[k] === 'string') ?? 'exact';
  return { kind, value: stringField(config, kind), ignoreCase };
}

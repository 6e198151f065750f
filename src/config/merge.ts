// --config-yaml over --config-path: objects merge key by key, recursively; a list or a scalar in
// the override replaces the value it lands on.

import { isJsonObject, JsonObject, JsonValue } from './json';

export function mergeJson(base: JsonValue, override: JsonValue): JsonValue {
  if (!isJsonObject(base) || !isJsonObject(override)) return override;
  const merged: JsonObject = { ...base };
  for (const [key, value] of Object.entries(override)) {
    merged[key] = Object.hasOwn(base, key) ? mergeJson(base[key], value) : value;
  }
  return merged;
}

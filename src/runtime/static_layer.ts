// A static_layer (a google.protobuf.Struct) as runtime values: nested objects flatten to keys
// joined with `.`; an object holding `numerator` or `denominator`, or an empty one, is one
// value (a FractionalPercent). Scalars are written as Envoy writes them (through YAML).

import { FieldError } from '../config/errors';
import { childPath } from '../config/field_path';
import { isJsonObject, JsonObject, JsonValue } from '../config/json';

/** @throws FieldError at the first list or null value, which Envoy refuses */
export function flattenStaticLayer(struct: JsonObject, path: string): [string, string][] {
  const out: [string, string][] = [];
  for (const [key, value] of Object.entries(struct)) walk(value, key, childPath(path, key), out);
  return out;
}

function walk(value: JsonValue, key: string, path: string, out: [string, string][]): void {
  if (typeof value === 'string') out.push([key, value]);
  else if (typeof value === 'number' || typeof value === 'boolean') out.push([key, String(value)]);
  else if (isJsonObject(value)) {
    const fields = Object.keys(value);
    if (fields.length === 0 || 'numerator' in value || 'denominator' in value) out.push([key, structText(value)]);
    else for (const field of fields) walk(value[field]!, `${key}.${field}`, childPath(path, field), out);
  } else {
    throw new FieldError(path, `Invalid runtime entry value for ${key}`);
  }
}

/** A one-level mapping as YAML, keys sorted: what Envoy's YAML round trip gives. */
function structText(value: JsonObject): string {
  const keys = Object.keys(value).sort();
  if (keys.length === 0) return '{}';
  return keys.map((k) => `${k}: ${typeof value[k] === 'string' ? value[k] : JSON.stringify(value[k])}`).join('\n');
}

// A google.protobuf.FieldMask (`a.b,c`) applied to proto JSON, for /config_dump?mask=: only the
// named fields stay. An Any keeps its @type and is masked inside (Envoy's trimResourceMessage);
// a path through a list applies to each element.

import { isJsonObject, JsonObject, JsonValue } from '../config/json';

export function parseFieldMask(mask: string): string[][] {
  return mask
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .map((p) => p.split('.'));
}

export function applyFieldMask(message: JsonObject, paths: readonly (readonly string[])[]): JsonObject {
  const out: Record<string, JsonValue> = {};
  if (typeof message['@type'] === 'string') out['@type'] = message['@type'];
  const byField = new Map<string, (readonly string[])[]>();
  for (const [head, ...rest] of paths) {
    if (head === undefined) continue;
    const tails = byField.get(head) ?? [];
    tails.push(rest);
    byField.set(head, tails);
  }
  for (const [field, tails] of byField) {
    const value = message[field];
    if (value === undefined) continue;
    // A path that ends here keeps the whole field.
    out[field] = tails.some((t) => t.length === 0) ? value : maskValue(value, tails);
  }
  return out;
}

function maskValue(value: JsonValue, paths: readonly (readonly string[])[]): JsonValue {
  if (Array.isArray(value)) return value.map((v) => maskValue(v, paths));
  return isJsonObject(value) ? applyFieldMask(value, paths) : value;
}

// JSON values as the pipeline handles them, and typed reads of the canonical v3 JSON that
// `decodeProtoJson` produces. The canonical form follows the schema, so a read only has to
// supply the proto3 default when a field is absent (defaults are omitted, like ProtoJSON).

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

export interface JsonObject {
  [key: string]: JsonValue;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A deep copy, several times faster than structuredClone on a large configuration. A value
 * met twice (a YAML alias) is copied twice: every stage after parsing sees a tree. `visit` sees
 * each object's copy once its fields are copied, so a rewrite of every object walks the tree once.
 */
export function cloneJson<T extends JsonValue>(value: T, visit?: (copy: JsonObject) => void): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const copy: JsonValue[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) copy[i] = cloneJson(value[i]!, visit);
    return copy as T;
  }
  const copy: JsonObject = {};
  for (const key in value) {
    // A JSON "__proto__" key is an own property; assigning it would set the prototype.
    if (key === '__proto__') Object.defineProperty(copy, key, { value: cloneJson(value[key]!, visit), enumerable: true, writable: true, configurable: true });
    else copy[key] = cloneJson(value[key]!, visit);
  }
  visit?.(copy);
  return copy as T;
}

/** A singular message field; undefined when unset. */
export function messageField(object: JsonObject, key: string): JsonObject | undefined {
  const value = object[key];
  return isJsonObject(value) ? value : undefined;
}

/**
 * The elements of a repeated field as written: configuration may give a single value there,
 * which Envoy's JSON parser (protobuf's) reads as a one-element list.
 */
export function repeatedValues(value: JsonValue): JsonValue[] {
  return Array.isArray(value) ? value : [value];
}

/** A repeated message field, in canonical JSON or as written; empty when unset. */
export function messageList(object: JsonObject, key: string): JsonObject[] {
  const value = object[key];
  return value === undefined ? [] : repeatedValues(value).filter(isJsonObject);
}

export function stringList(object: JsonObject, key: string): string[] {
  const value = object[key];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

export function stringField(object: JsonObject, key: string): string {
  const value = object[key];
  return typeof value === 'string' ? value : '';
}

/** 32-bit integers, floats and wrapper values are JSON numbers; 64-bit integers are strings. */
export function numberField(object: JsonObject, key: string, fallback = 0): number {
  const value = object[key];
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return Number(value);
  return fallback;
}

export function boolField(object: JsonObject, key: string, fallback = false): boolean {
  const value = object[key];
  return typeof value === 'boolean' ? value : fallback;
}

/** An enum field by name; proto3's first value (index 0) when unset. */
export function enumField<T extends string = string>(object: JsonObject, key: string, zero: NoInfer<T>): T {
  const value = object[key];
  return typeof value === 'string' ? (value as T) : zero;
}

/** A google.protobuf.Duration field in (possibly fractional) milliseconds; undefined when unset. */
export function durationMs(object: JsonObject, key: string): number | undefined {
  const value = object[key];
  if (typeof value !== 'string') return undefined;
  // Canonical ProtoJSON durations: optional sign, whole seconds, up to 9 fraction digits, 's'.
  const match = /^(-?)(\d+)(?:\.(\d{1,9}))?s$/.exec(value);
  if (match === null) return undefined;
  const millis = Number(match[2]) * 1000 + Number((match[3] ?? '').padEnd(9, '0')) / 1e6;
  return match[1] === '-' ? -millis : millis;
}

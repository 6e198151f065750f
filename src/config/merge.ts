// --config-yaml over --config-path, as Envoy merges them: the two are decoded apart, then the
// second merged into the first with protobuf's MergeFrom. That merge follows the schema: a set
// field of the overlay replaces a scalar, merges into a message and appends to a repeated field;
// a map takes the overlay's entries by key; a oneof member set in the overlay clears the others.
// It works on canonical v3 JSON (decodeProtoJson's output), where an unset proto3 scalar is
// absent, so every key of the overlay is a field MergeFrom would copy.

import * as protobuf from 'protobufjs/light';
import * as protojson from 'protobufjs/ext/protojson';
import { isJsonObject, JsonObject, JsonValue } from './json';
import { WELL_KNOWN_LEAVES } from './proto_json';

const ANY = '.google.protobuf.Any';
const WRAPPER = /^\.google\.protobuf\.(?:Double|Float|Int64|UInt64|Int32|UInt32|Bool|String|Bytes)Value$/;
const SECONDS_AND_NANOS = new Set(['.google.protobuf.Duration', '.google.protobuf.Timestamp']);

/**
 * `base.MergeFrom(overlay)` for two messages of `type` in canonical v3 JSON; neither is modified.
 * Fields come out in declaration order, as canonical JSON has them.
 */
export function mergeMessage(type: protobuf.Type, base: JsonObject, overlay: JsonObject): JsonObject {
  if (type.fullName === ANY) {
    // An Any is a type URL and bytes, two scalars: a set one replaces the content wholesale.
    return Object.keys(overlay).length > 0 ? overlay : base;
  }
  const merged: JsonObject = { ...base };
  for (const field of type.fieldsArray) {
    if (!Object.hasOwn(overlay, field.name)) continue;
    const value = overlay[field.name]!;
    if (field.partOf !== null) {
      for (const member of field.partOf.fieldsArray) if (member !== field) delete merged[member.name];
    }
    merged[field.name] = Object.hasOwn(base, field.name) ? mergeField(field, base[field.name]!, value) : value;
  }
  const ordered: JsonObject = {};
  for (const field of type.fieldsArray) if (Object.hasOwn(merged, field.name)) ordered[field.name] = merged[field.name]!;
  return ordered;
}

/** Both sides set. */
function mergeField(field: protobuf.Field, base: JsonValue, overlay: JsonValue): JsonValue {
  if (field.map && isJsonObject(base) && isJsonObject(overlay)) return { ...base, ...overlay };
  if (field.repeated && Array.isArray(base) && Array.isArray(overlay)) return [...base, ...overlay];
  const type = field.resolvedType;
  if (!(type instanceof protobuf.Type)) return overlay;
  if (WELL_KNOWN_LEAVES.has(type.fullName)) return mergeWellKnown(type, base, overlay);
  return isJsonObject(base) && isJsonObject(overlay) ? mergeMessage(type, base, overlay) : overlay;
}

/** The well-known types whose JSON is not an object of their fields, merged as their fields would be. */
function mergeWellKnown(type: protobuf.Type, base: JsonValue, overlay: JsonValue): JsonValue {
  const name = type.fullName;
  // A wrapper's `value` is a proto3 scalar: set to its default, it copies nothing.
  if (WRAPPER.test(name)) return isProto3Default(overlay) ? base : overlay;
  if (SECONDS_AND_NANOS.has(name)) return mergeSecondsAndNanos(type, base, overlay);
  if (name === '.google.protobuf.FieldMask') {
    // Repeated `paths`, written comma-separated.
    return typeof base === 'string' && typeof overlay === 'string' && base !== '' && overlay !== '' ? `${base},${overlay}` : overlay || base;
  }
  return mergeStructValue(base, overlay);
}

function isProto3Default(value: JsonValue): boolean {
  return value === 0 || value === '0' || value === '' || value === false;
}

/**
 * Duration and Timestamp: `seconds` and `nanos` are two scalars, each copied only when not zero,
 * so 5s over 0.25s is 5.25s, as in Envoy.
 */
function mergeSecondsAndNanos(type: protobuf.Type, base: JsonValue, overlay: JsonValue): JsonValue {
  const merged = protojson.fromJson(type, base) as unknown as { seconds: unknown; nanos: number };
  const from = protojson.fromJson(type, overlay) as unknown as { seconds: unknown; nanos: number };
  if (String(from.seconds) !== '0') merged.seconds = from.seconds;
  if (from.nanos !== 0) merged.nanos = from.nanos;
  return protojson.toJson(type, merged as unknown as protobuf.Message) as JsonValue;
}

/**
 * Struct (a map of Values: entries replace by key), ListValue (repeated: appended) and Value (a
 * oneof: a Struct or a list merges into the same kind, anything else replaces).
 */
function mergeStructValue(base: JsonValue, overlay: JsonValue): JsonValue {
  if (isJsonObject(base) && isJsonObject(overlay)) return { ...base, ...overlay };
  if (Array.isArray(base) && Array.isArray(overlay)) return [...base, ...overlay];
  return overlay;
}

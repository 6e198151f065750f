// Decoding configuration JSON against the v3 protos, into canonical v3 JSON: snake_case keys in
// declaration order, proto3 defaults omitted, durations as "5s", wrappers as bare values, enums
// by name, Any as {"@type": <v3 type URL>, ...fields}. That canonical form is both what the
// validators read and what /config_dump prints.
//
// protobufjs's ProtoJSON reader does the value semantics (integer ranges, duration syntax, enum
// names, well-known types) but its errors carry no field path and it stops at the first unknown
// key. So this walker owns the structure (messages, lists, maps, Any, oneofs, unknown fields,
// paths) and hands each leaf value to protobufjs on its own.

import * as protobuf from 'protobufjs/light';
import * as protojson from 'protobufjs/ext/protojson';
import { FieldError, UnknownFieldError } from './errors';
import { childPath, indexPath, keyPath } from './field_path';
import { isJsonObject, JsonObject, JsonValue } from './json';
import { ProtoSchema } from './schema';

const ANY = '.google.protobuf.Any';

/** Messages whose ProtoJSON form is not an object of their fields: decoded as leaves. */
export const WELL_KNOWN_LEAVES: ReadonlySet<string> = new Set(
  [
    'Duration', 'Timestamp', 'FieldMask', 'Struct', 'Value', 'ListValue', 'DoubleValue', 'FloatValue',
    'Int64Value', 'UInt64Value', 'Int32Value', 'UInt32Value', 'BoolValue', 'StringValue', 'BytesValue',
  ].map((name) => `.google.protobuf.${name}`),
);

export interface DecodeOptions {
  /** Skip (and list) keys the schema does not know, instead of failing on the first. */
  readonly allowUnknownFields: boolean;
  /**
   * Rewrites of a message, by its type's full name (protobufjs's, with its leading dot), made before it is decoded: what a v2 file
   * says that its v3 successor says otherwise, wherever the message sits (a StringMatcher's
   * `regex`, say). Each rewrites its message in place.
   */
  readonly messageRewrites?: ReadonlyMap<string, (message: JsonObject, path: string) => void>;
}

export interface DecodedMessage {
  readonly json: JsonObject;
  /** Paths of the keys that were skipped as unknown. */
  readonly unknownFields: readonly string[];
}

/**
 * @param path where `input` sits (`resources[3]` for a resource decoded apart from its response), for the paths of errors and unknown fields
 * @throws FieldError naming the path of the first invalid value
 */
export function decodeProtoJson(
  schema: ProtoSchema,
  type: protobuf.Type,
  input: unknown,
  options: DecodeOptions,
  path = '',
): DecodedMessage {
  const decoder = new ProtoJsonDecoder(schema, options.allowUnknownFields, options.messageRewrites ?? null);
  const json = decoder.message(type, input, path);
  return { json, unknownFields: decoder.unknownFields };
}

/** Where a leaf sits in its field: the field itself, an element of a list, or a map entry. */
export type LeafPosition = { readonly kind: 'single' } | { readonly kind: 'element' } | { readonly kind: 'entry'; readonly key: string };

const SINGLE: LeafPosition = { kind: 'single' };
const ELEMENT: LeafPosition = { kind: 'element' };

/**
 * A message type as the decoder reads it, made once per type: every key it accepts, snake_case
 * or lowerCamelCase, to the field's position in declaration order (the order of its output).
 */
interface MessagePlan {
  readonly fields: readonly protobuf.Field[];
  readonly position: ReadonlyMap<string, number>;
}

class ProtoJsonDecoder {
  readonly unknownFields: string[] = [];
  private readonly plans = new Map<protobuf.Type, MessagePlan>();
  /** protobufjs rebuilds fullName on every read; a large bootstrap reads it per message. */
  private readonly fullNames = new Map<protobuf.Type, string>();

  constructor(
    private readonly schema: ProtoSchema,
    private readonly allowUnknownFields: boolean,
    private readonly rewrites: DecodeOptions['messageRewrites'] | null,
  ) {}

  message(type: protobuf.Type, value: unknown, path: string): JsonObject {
    if (this.fullName(type) === ANY) return this.any(value, path);
    if (!isJsonObject(value)) throw new FieldError(path, `expected an object, got ${describe(value)}`);
    this.rewrites?.get(this.fullName(type))?.(value, path);
    const plan = this.planOf(type);
    // Positions of the fields met (a message sets a few), and the decoded ones with their values.
    const seen: number[] = [];
    const decoded: { readonly position: number; readonly value: JsonValue }[] = [];
    let inOrder = true;
    let oneofsSet: Map<string, string[]> | null = null;
    for (const key of Object.keys(value)) {
      const fieldPath = childPath(path, key);
      const position = plan.position.get(key);
      if (position === undefined) {
        this.unknownField(fieldPath);
        continue;
      }
      const field = plan.fields[position]!;
      // `port_value` and `portValue` are the same field.
      if (seen.includes(position)) throw new FieldError(fieldPath, `duplicate field '${field.name}'`);
      seen.push(position);
      const child = value[key]!;
      // ProtoJSON reads null as "not set".
      if (child === null) continue;
      if (field.partOf !== null) checkOneof((oneofsSet ??= new Map()), field.partOf, field.name, path);
      const result = this.field(type, field, child, fieldPath);
      if (result === undefined) continue;
      if (decoded.length > 0 && decoded[decoded.length - 1]!.position > position) inOrder = false;
      decoded.push({ position, value: result });
    }
    if (!inOrder) decoded.sort((a, b) => a.position - b.position);
    const out: JsonObject = {};
    for (const { position, value: result } of decoded) out[plan.fields[position]!.name] = result;
    return out;
  }

  private planOf(type: protobuf.Type): MessagePlan {
    let plan = this.plans.get(type);
    if (plan === undefined) {
      const fields = type.fieldsArray;
      const position = new Map<string, number>();
      // A key is a field's name, else (ProtoJSON) the first field whose lowerCamelCase it is.
      fields.forEach((field, at) => {
        if (!position.has(field.jsonName)) position.set(field.jsonName, at);
      });
      fields.forEach((field, at) => position.set(field.name, at));
      plan = { fields, position };
      this.plans.set(type, plan);
    }
    return plan;
  }

  private field(parent: protobuf.Type, field: protobuf.Field, value: JsonValue, path: string): JsonValue | undefined {
    if (field.map) {
      if (!isJsonObject(value)) throw new FieldError(path, `expected a map (object), got ${describe(value)}`);
      const out: JsonObject = {};
      for (const [key, item] of Object.entries(value)) {
        const result = this.singular(parent, field, item, keyPath(path, key), { kind: 'entry', key });
        if (result !== undefined) out[key] = result;
      }
      return Object.keys(out).length > 0 ? out : undefined;
    }
    if (field.repeated) {
      // protobuf's JSON parser, which Envoy reads YAML and JSON with, takes a single value for a
      // repeated field as its one element; only a list for a singular field is an error.
      if (!Array.isArray(value)) {
        const item = this.singular(parent, field, value, path, ELEMENT);
        return item === undefined ? undefined : [item];
      }
      const out = value.flatMap((item, i) => this.singular(parent, field, item, indexPath(path, i), ELEMENT) ?? []);
      return out.length > 0 ? out : undefined;
    }
    return this.singular(parent, field, value, path, SINGLE);
  }

  private singular(
    parent: protobuf.Type,
    field: protobuf.Field,
    value: JsonValue,
    path: string,
    position: LeafPosition,
  ): JsonValue | undefined {
    const resolved = field.resolvedType;
    if (resolved instanceof protobuf.Type && !WELL_KNOWN_LEAVES.has(this.fullName(resolved))) {
      return this.message(resolved, value, path);
    }
    return decodeLeaf(parent, field, value, path, position);
  }

  private fullName(type: protobuf.Type): string {
    let name = this.fullNames.get(type);
    if (name === undefined) {
      name = type.fullName;
      this.fullNames.set(type, name);
    }
    return name;
  }

  private any(value: unknown, path: string): JsonObject {
    if (!isJsonObject(value)) throw new FieldError(path, `expected an object, got ${describe(value)}`);
    const { '@type': url, ...body } = value;
    if (url === undefined || url === null) {
      if (Object.keys(body).length === 0) return {};
      throw new FieldError(path, 'missing @type');
    }
    const urlPath = childPath(path, '@type');
    if (typeof url !== 'string') throw new FieldError(urlPath, `expected a type URL, got ${describe(url)}`);
    const target = this.schema.resolveTypeUrl(url);
    if (target === undefined) throw new FieldError(urlPath, `unknown type '${url}'`);
    if (WELL_KNOWN_LEAVES.has(target.type.fullName)) {
      // ProtoJSON puts a well-known type's own JSON form under "value".
      const inner = decodeWellKnown(target.type, body['value'] ?? null, childPath(path, 'value'));
      return { '@type': target.typeUrl, value: inner };
    }
    return { '@type': target.typeUrl, ...this.message(target.type, body, path) };
  }

  private unknownField(path: string): void {
    if (!this.allowUnknownFields) throw new UnknownFieldError(path);
    this.unknownFields.push(path);
  }
}

function checkOneof(oneofsSet: Map<string, string[]>, oneof: protobuf.OneOf, fieldName: string, path: string): void {
  const set = oneofsSet.get(oneof.name) ?? [];
  set.push(fieldName);
  oneofsSet.set(oneof.name, set);
  if (set.length > 1) throw new FieldError(path, `only one of ${set.join(', ')} may be set`);
}

/**
 * Decodes one scalar, enum or well-known value with protobufjs, by decoding and printing a
 * message of the parent type holding just that value.
 */
function decodeLeaf(
  parent: protobuf.Type,
  field: protobuf.Field,
  value: JsonValue,
  path: string,
  position: LeafPosition,
): JsonValue | undefined {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return decodeWellKnown(resolved, value, path);
  const shortcut = canonicalLeaf(field, value, position);
  if (shortcut !== NO_SHORTCUT) return shortcut;
  if (resolved instanceof protobuf.Enum) value = enumNameInAnyCase(resolved, value);
  const wrapped = position.kind === 'single' ? value : position.kind === 'element' ? [value] : { [position.key]: value };
  let printed: JsonValue | undefined;
  try {
    const message = protojson.fromJson(parent, { [field.name]: wrapped });
    printed = (protojson.toJson(parent, message) as JsonObject)[field.jsonName];
  } catch (error) {
    throw new FieldError(path, protojsonReason(error));
  }
  const result = unwrap(printed, position);
  // Proto3 enums are open, so protobufjs keeps unknown numbers; a configuration must not.
  if (resolved instanceof protobuf.Enum && typeof result === 'number') {
    throw new FieldError(path, `unknown enum value: ${result}`);
  }
  return result;
}

const NO_SHORTCUT = Symbol('no shortcut');

/**
 * The canonical form of the leaves that are already in it (a string, a bool, a 32-bit integer
 * as a number, an enum by its declared name), without protobufjs's round trip: a bootstrap of
 * 10,000 clusters has ~10^6 of them. Anything else takes the round trip.
 */
export function canonicalLeaf(field: protobuf.Field, value: JsonValue, position: LeafPosition): JsonValue | undefined | typeof NO_SHORTCUT {
  const single = position.kind === 'single';
  let isDefault: boolean;
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Enum) {
    if (typeof value !== 'string' || !Object.hasOwn(resolved.values, value)) return NO_SHORTCUT;
    isDefault = resolved.values[value] === 0;
  } else if (field.type === 'string' && typeof value === 'string') isDefault = value === '';
  else if (field.type === 'bool' && typeof value === 'boolean') isDefault = !value;
  else if (typeof value === 'number' && Number.isInteger(value) && inRange(field.type, value)) isDefault = value === 0;
  else return NO_SHORTCUT;
  // Proto3 leaves a field at its default unprinted, unless it has presence (a oneof member such
  // as port_value); list elements and map values stay.
  return single && isDefault && !field.hasPresence ? undefined : value;
}

function inRange(type: string, value: number): boolean {
  if (type === 'uint32' || type === 'fixed32') return value >= 0 && value <= 0xffffffff;
  if (type === 'int32' || type === 'sint32' || type === 'sfixed32') return value >= -0x80000000 && value <= 0x7fffffff;
  return false;
}

/**
 * Envoy's JSON loader reads enum names in any case (`codec_type: auto`); the value goes on as
 * the declared name, so the model and /config_dump see `AUTO`. A string no name matches in any
 * case is left for protobufjs to refuse.
 */
export function enumNameInAnyCase(type: protobuf.Enum, value: JsonValue): JsonValue {
  if (typeof value !== 'string' || Object.hasOwn(type.values, value)) return value;
  const upper = value.toUpperCase();
  return Object.keys(type.values).find((name) => name.toUpperCase() === upper) ?? value;
}

function unwrap(printed: JsonValue | undefined, position: LeafPosition): JsonValue | undefined {
  if (printed === undefined || position.kind === 'single') return printed;
  if (position.kind === 'element') return Array.isArray(printed) ? printed[0] : undefined;
  return isJsonObject(printed) ? printed[position.key] : undefined;
}

/** Whole seconds with no leading zero, at most 11 digits: well inside Duration's range. */
const CANONICAL_WHOLE_SECONDS = /^(?:0|[1-9]\d{0,10})s$/;

function decodeWellKnown(type: protobuf.Type, value: JsonValue, path: string): JsonValue {
  // The common duration ("1s", "5s") is already canonical: no round trip for each cluster.
  if (typeof value === 'string' && CANONICAL_WHOLE_SECONDS.test(value) && type.name === 'Duration' && type.parent?.name === 'protobuf') return value;
  try {
    return protojson.toJson(type, protojson.fromJson(type, value)) as JsonValue;
  } catch (error) {
    throw new FieldError(path, protojsonReason(error));
  }
}

/** protobufjs says `<qualified name>: <problem>: <value>`; the path replaces the name. */
function protojsonReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^[\w.]+: /, '');
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (isJsonObject(value)) return 'an object';
  return JSON.stringify(value) ?? String(value);
}

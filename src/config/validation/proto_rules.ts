// The protos' own validation rules (protoc-gen-validate's `validate.rules` on fields and
// `validate.required` on oneofs, extracted by scripts/gen-protos.js), enforced on a decoded v3
// bootstrap as Envoy enforces them when it loads one: every message, typed_config contents
// included. This walks the messages; proto_rule_checks.ts checks each value. Pure.
//
// PGV checks a plain (non-oneof, non-message) field even when unset, as its default: a string
// with min_len 1 left out is an empty string. Message, wrapper and oneof fields are checked only
// when set, but `required`.

import type * as protobuf from 'protobufjs/light';
import { FieldError, FieldErrorCollector } from '../errors';
import { childPath, indexPath, keyPath } from '../field_path';
import { isJsonObject, JsonObject, JsonValue } from '../json';
import { protobufLibrary } from '../protobuf_library';
import { ProtoSchema } from '../schema';
import { compileKindCheck, type KindCheck, objectOf as object, scalarDefault } from './proto_rule_checks';

const LEAF_MESSAGES = new Set(
  ['Duration', 'Timestamp', 'FieldMask', 'Struct', 'Value', 'ListValue', 'Empty'].map((n) => `google.protobuf.${n}`),
);
const WRAPPERS = new Set(
  ['DoubleValue', 'FloatValue', 'Int64Value', 'UInt64Value', 'Int32Value', 'UInt32Value', 'BoolValue', 'StringValue', 'BytesValue'].map(
    (n) => `google.protobuf.${n}`,
  ),
);
const ANY = 'google.protobuf.Any';

/**
 * @param bootstrap decoded by decodeProtoJson
 * @throws FieldError, or FieldErrors: the first broken rule of each resource (each static
 *   listener, cluster and secret, and each other top-level field), like the other validators
 */
export function checkProtoRules(schema: ProtoSchema, bootstrap: JsonObject): void {
  const checker = new ProtoRuleChecker(schema);
  const errors = new FieldErrorCollector();
  const resourcesField = schema.bootstrap.fields['static_resources'];
  const resources = bootstrap['static_resources'];
  for (const field of schema.bootstrap.fieldsArray) {
    if (field !== resourcesField || !isJsonObject(resources)) {
      errors.run(() => checker.field(schema.bootstrap, field, bootstrap, ''));
      continue;
    }
    const resourcesType = field.resolvedType as protobuf.Type;
    for (const resourceField of resourcesType.fieldsArray) {
      const list = resources[resourceField.name];
      if (!resourceField.repeated || !Array.isArray(list)) {
        errors.run(() => checker.field(resourcesType, resourceField, resources, 'static_resources'));
        continue;
      }
      const listPath = childPath('static_resources', resourceField.name);
      errors.run(() => checker.listRules(resourcesType, resourceField, list, listPath));
      list.forEach((item, i) => errors.run(() => checker.element(resourceField, item, indexPath(listPath, i))));
    }
  }
  errors.run(() => checker.oneofs(schema.bootstrap, bootstrap, ''));
  errors.throwIfAny();
}

/**
 * The same rules on one message of type `typeName` at `path` (a CDS resource), as
 * checkProtoRules applies them to that message inside a bootstrap.
 * @throws FieldError at the first broken rule
 */
export function checkMessageProtoRules(schema: ProtoSchema, typeName: string, json: JsonObject, path: string): void {
  new ProtoRuleChecker(schema).message(schema.root.lookupType(typeName), json, path);
}

/**
 * A message type as the check walks it, read once per type: a message visits the fields it
 * sets and those whose rules an unset value breaks, in declaration order (PGV's), instead of
 * every field of its type (a Cluster has 50, a config sets a few).
 */
interface TypePlan {
  /** `any`: checked against the type its URL names; `skip`: PGV's `disabled` message option. */
  readonly kind: 'any' | 'skip' | 'fields';
  readonly fields: readonly protobuf.Field[];
  readonly position: ReadonlyMap<string, number>;
  /** By position: whether the field's rules pass when it is unset (then it is visited only when set). */
  readonly unsetPasses: readonly boolean[];
  /** Positions of the fields whose rules an unset value breaks. */
  readonly checkedUnset: readonly number[];
  readonly requiredOneofs: readonly string[];
}

/** One value's rules, read once: whether it is required, and each kind's check but `message`'s. */
interface ValueRules {
  readonly required: boolean;
  readonly kinds: ReadonlyArray<readonly [string, KindCheck]>;
}

class ProtoRuleChecker {
  private readonly fullNames = new Map<protobuf.ReflectionObject, string>();
  // Each field's rules (found by type and field name) and each rule set's kinds, kept for the
  // check: found anew at every message and value, they were a fifth of checking 10,000 clusters.
  private readonly fieldRules = new Map<protobuf.Field, JsonObject | null>();
  private readonly valueRules = new Map<JsonObject, ValueRules>();
  private readonly plans = new Map<protobuf.Type, TypePlan>();
  /** Once: a require() for every message visited was 4% of validating 10,000 clusters. */
  private readonly library = protobufLibrary();

  constructor(private readonly schema: ProtoSchema) {}

  /** All rules of a message of `type` at `path`, and of the messages in it. */
  message(type: protobuf.Type, json: JsonObject, path: string): void {
    const plan = this.planOf(type);
    if (plan.kind === 'any') return this.any(json, path);
    if (plan.kind === 'skip') return;
    const visited = plan.checkedUnset.slice();
    for (const key in json) {
      const position = plan.position.get(key);
      if (position !== undefined && plan.unsetPasses[position] && (json[key] ?? null) !== null) visited.push(position);
    }
    if (visited.length > 1) visited.sort((a, b) => a - b);
    for (const position of visited) this.field(type, plan.fields[position]!, json, path);
    this.oneofs(type, json, path);
  }

  /** The rules of one field of `parent` (the message `json` at `path`), then its contents. */
  field(parent: protobuf.Type, field: protobuf.Field, json: JsonObject, path: string): void {
    const rules = this.rulesOf(parent, field);
    const value = json[field.name] ?? undefined;
    // Most fields of a large config are unset and ruleless: nothing to check, no path to build.
    if (value === undefined && rules === undefined) return;
    const fieldPath = childPath(path, field.name);
    if (field.map) {
      const map = isJsonObject(value) ? value : {};
      if (rules?.['map'] !== undefined) checkMap(object(rules['map']), map, fieldPath);
      const mapRules = object(rules?.['map']);
      for (const [key, item] of Object.entries(map)) {
        const itemPath = keyPath(fieldPath, key);
        const keyRules = object(mapRules['keys']);
        if (Object.keys(keyRules).length > 0) this.singular(keyRules, field, key, itemPath, true);
        this.element(field, item, itemPath, object(mapRules['values']));
      }
      return;
    }
    if (field.repeated) {
      const list = Array.isArray(value) ? value : [];
      this.listRules(parent, field, list, fieldPath);
      list.forEach((item, i) => this.element(field, item, indexPath(fieldPath, i)));
      return;
    }
    // A oneof member is checked only when it is the member set, `required` included.
    const inOneof = field.partOf !== null;
    if (rules !== undefined && !(inOneof && value === undefined)) this.singular(rules, field, value, fieldPath, !inOneof);
    if (value !== undefined && !skipsContents(rules)) this.contents(field, value, fieldPath);
  }

  /** A repeated field's own rules (count, uniqueness); its items are checked by element(). */
  listRules(parent: protobuf.Type, field: protobuf.Field, list: readonly JsonValue[], path: string): void {
    const repeated = this.rulesOf(parent, field)?.['repeated'];
    if (repeated !== undefined) checkRepeated(object(repeated), list, path);
  }

  /** One item of a repeated or map field: the item rules, then its contents. */
  element(field: protobuf.Field, item: JsonValue, path: string, itemRules?: JsonObject): void {
    const rules = itemRules ?? object(object(this.rulesOf(field.parent as protobuf.Type, field)?.['repeated'])['items']);
    if (Object.keys(rules).length > 0) this.singular(rules, field, item, path, false);
    if (!skipsContents(rules)) this.contents(field, item, path);
  }

  /** The `(validate.required)` oneofs of a message: one member must be set. */
  oneofs(type: protobuf.Type, json: JsonObject, path: string): void {
    for (const name of this.planOf(type).requiredOneofs) {
      const oneof = type.oneofs[name];
      if (oneof === undefined || oneof.fieldsArray.some((member) => json[member.name] !== undefined && json[member.name] !== null)) continue;
      throw new FieldError(childPath(path, name), `is required: set one of ${oneof.fieldsArray.map((m) => m.name).join(', ')}`);
    }
  }

  private planOf(type: protobuf.Type): TypePlan {
    let plan = this.plans.get(type);
    if (plan === undefined) {
      const typeName = this.fullName(type);
      const fields = type.fieldsArray;
      const rules = this.schema.rulesOf(typeName);
      const kind = typeName === ANY ? 'any' : rules?.disabled ? 'skip' : 'fields';
      // The check of an unset field depends on its rules only, so one trial decides it for good.
      const unsetPasses = kind === 'fields' ? fields.map((field) => this.passesUnset(type, field)) : [];
      const checkedUnset = unsetPasses.flatMap((passes, position) => (passes ? [] : [position]));
      const position = new Map(fields.map((field, at) => [field.name, at]));
      plan = { kind, fields, position, unsetPasses, checkedUnset, requiredOneofs: rules?.requiredOneofs ?? [] };
      this.plans.set(type, plan);
    }
    return plan;
  }

  private passesUnset(type: protobuf.Type, field: protobuf.Field): boolean {
    try {
      this.field(type, field, {}, '');
      return true;
    } catch {
      return false;
    }
  }

  private rulesOf(parent: protobuf.Type, field: protobuf.Field): JsonObject | undefined {
    let rules = this.fieldRules.get(field);
    if (rules === undefined) {
      rules = this.schema.rulesOf(this.fullName(parent))?.fields?.[field.name] ?? null;
      this.fieldRules.set(field, rules);
    }
    return rules ?? undefined;
  }

  /** A message-typed value: its own rules, recursively. */
  private contents(field: protobuf.Field, value: JsonValue, path: string): void {
    const type = field.resolvedType;
    if (!(type instanceof this.library.Type) || !isJsonObject(value)) return;
    const typeName = this.fullName(type);
    if (LEAF_MESSAGES.has(typeName) || WRAPPERS.has(typeName)) return;
    this.message(type, value, path);
  }

  /** An Any's content, decoded against the type its URL names (decoding resolved it already). */
  private any(json: JsonObject, path: string): void {
    const url = json['@type'];
    const target = typeof url === 'string' ? this.schema.resolveTypeUrl(url) : undefined;
    if (target === undefined || LEAF_MESSAGES.has(this.fullName(target.type)) || WRAPPERS.has(this.fullName(target.type))) return;
    const { '@type': _url, ...body } = json;
    this.message(target.type, body, path);
  }

  /**
   * The rules of one value (a singular field, an item, a map key). `plain`: a proto3 scalar
   * outside a oneof, which is checked as its default when unset.
   */
  private singular(rules: JsonObject, field: protobuf.Field, value: JsonValue | undefined, path: string, plain: boolean): void {
    const { required, kinds } = this.valueRulesOf(rules);
    if (required && value === undefined) throw new FieldError(path, 'value is required');
    for (const [kind, check] of kinds) {
      const actual = value ?? (plain && field.resolvedType === null ? scalarDefault(kind) : undefined);
      if (actual === undefined || actual === null) continue;
      check(actual, field, path);
    }
  }

  private valueRulesOf(rules: JsonObject): ValueRules {
    let read = this.valueRules.get(rules);
    if (read === undefined) {
      const kinds = Object.entries(rules).filter((entry): entry is [string, JsonObject] => entry[0] !== 'message' && isJsonObject(entry[1]));
      // `message.required`, or a kind's own `required` (an Any's, a Duration's).
      const required = object(rules['message'])['required'] === true || kinds.some(([, kindRules]) => kindRules['required'] === true);
      read = { required, kinds: kinds.map(([kind, kindRules]) => [kind, compileKindCheck(kind, kindRules)] as const) };
      this.valueRules.set(rules, read);
    }
    return read;
  }

  private fullName(reflected: protobuf.ReflectionObject): string {
    let name = this.fullNames.get(reflected);
    if (name === undefined) {
      name = reflected.fullName.slice(1);
      this.fullNames.set(reflected, name);
    }
    return name;
  }
}

function skipsContents(rules: JsonObject | undefined): boolean {
  return object(rules?.['message'])['skip'] === true;
}


function checkMap(rules: JsonObject, map: JsonObject, path: string): void {
  const pairs = Object.keys(map).length;
  if (rules['ignore_empty'] === true && pairs === 0) return;
  const min = rules['min_pairs'] === undefined ? undefined : Number(rules['min_pairs']);
  const max = rules['max_pairs'] === undefined ? undefined : Number(rules['max_pairs']);
  if (min !== undefined && pairs < min) throw new FieldError(path, `value must contain at least ${min} pair(s)`);
  if (max !== undefined && pairs > max) throw new FieldError(path, `value must contain no more than ${max} pair(s)`);
}

function checkRepeated(rules: JsonObject, items: readonly JsonValue[], path: string): void {
  if (rules['ignore_empty'] === true && items.length === 0) return;
  const min = rules['min_items'] === undefined ? undefined : Number(rules['min_items']);
  const max = rules['max_items'] === undefined ? undefined : Number(rules['max_items']);
  if (min !== undefined && items.length < min) throw new FieldError(path, `value must contain at least ${min} item(s)`);
  if (max !== undefined && items.length > max) throw new FieldError(path, `value must contain no more than ${max} item(s)`);
  if (rules['unique'] === true) {
    const seen = new Set<string>();
    items.forEach((item, i) => {
      const key = JSON.stringify(item);
      if (seen.has(key)) throw new FieldError(indexPath(path, i), 'repeated value must contain unique items');
      seen.add(key);
    });
  }
}

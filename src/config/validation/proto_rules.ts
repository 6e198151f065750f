// The protos' own validation rules (protoc-gen-validate's `validate.rules` on fields and
// `validate.required` on oneofs, extracted by scripts/gen-protos.js), enforced on a decoded v3
// bootstrap as Envoy enforces them when it loads one: every message, typed_config contents
// included. Errors use PGV's wording, prefixed by the field path. Pure.
//
// PGV checks a plain (non-oneof, non-message) field even when unset, as its default: a string
// with min_len 1 left out is an empty string. Message, wrapper and oneof fields are checked only
// when set, but `required`.

import { isIP } from 'node:net';
import type * as protobuf from 'protobufjs/light';
import { FieldError, FieldErrorCollector } from '../errors';
import { childPath, indexPath, keyPath } from '../field_path';
import { isJsonObject, JsonObject, JsonValue } from '../json';
import { protobufLibrary } from '../protobuf_library';
import { ProtoSchema } from '../schema';
import { SafeRegex } from '../../regex/safe_regex';

const INTEGER_KINDS = new Set([
  'int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'fixed32', 'fixed64', 'sfixed32', 'sfixed64',
]);
const FLOAT_KINDS = new Set(['float', 'double']);
const LEAF_MESSAGES = new Set(
  ['Duration', 'Timestamp', 'FieldMask', 'Struct', 'Value', 'ListValue', 'Empty'].map((n) => `google.protobuf.${n}`),
);
const WRAPPERS = new Set(
  ['DoubleValue', 'FloatValue', 'Int64Value', 'UInt64Value', 'Int32Value', 'UInt32Value', 'BoolValue', 'StringValue', 'BytesValue'].map(
    (n) => `google.protobuf.${n}`,
  ),
);
const ANY = 'google.protobuf.Any';

/** PGV's well-known regexes: strict (RFC 7230) and, with `strict: false`, only NUL, LF, CR refused. */
const HEADER_NAME_STRICT = /^:?[0-9a-zA-Z!#$%&'*+\-.^_|~`]+$/;
const HEADER_VALUE_STRICT = /^[^\u0000-\u0008\u000A-\u001F\u007F]*$/;
const HEADER_LOOSE = /^[^\u0000\u000A\u000D]*$/;

const NANOS_PER_SECOND = 1_000_000_000n;

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

/** One value's rules, read once: whether it is required, and each kind's rules but `message`'s. */
interface ValueRules {
  readonly required: boolean;
  readonly kinds: ReadonlyArray<readonly [string, JsonObject]>;
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
    for (const [kind, kindRules] of kinds) {
      const actual = value ?? (plain && field.resolvedType === null ? scalarDefault(kind) : undefined);
      if (actual === undefined || actual === null) continue;
      checkKind(kind, kindRules, actual, field, path);
    }
  }

  private valueRulesOf(rules: JsonObject): ValueRules {
    let read = this.valueRules.get(rules);
    if (read === undefined) {
      const kinds = Object.entries(rules).filter((entry): entry is [string, JsonObject] => entry[0] !== 'message' && isJsonObject(entry[1]));
      // `message.required`, or a kind's own `required` (an Any's, a Duration's).
      read = { required: object(rules['message'])['required'] === true || kinds.some(([, kindRules]) => kindRules['required'] === true), kinds };
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

function object(value: JsonValue | undefined): JsonObject {
  return isJsonObject(value) ? value : {};
}

function list(value: JsonValue | undefined): JsonValue[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

/** A proto3 scalar's value when unset, in its canonical JSON form. */
function scalarDefault(kind: string): JsonValue | undefined {
  if (INTEGER_KINDS.has(kind) || FLOAT_KINDS.has(kind)) return 0;
  if (kind === 'string' || kind === 'bytes') return '';
  if (kind === 'bool') return false;
  return undefined;
}

function checkKind(kind: string, rules: JsonObject, value: JsonValue, field: protobuf.Field, path: string): void {
  if (INTEGER_KINDS.has(kind)) return checkOrdered(rules, toBigInt(value), toBigInt, String, path, 0n);
  if (FLOAT_KINDS.has(kind)) return checkOrdered(rules, Number(value), Number, String, path, 0);
  switch (kind) {
    case 'bool':
      if (rules['const'] !== undefined && value !== rules['const']) throw new FieldError(path, `value must equal ${String(rules['const'])}`);
      return;
    case 'string':
      return checkString(rules, String(value), path);
    case 'bytes':
      return checkBytes(rules, Buffer.from(String(value), 'base64'), path);
    case 'enum':
      return checkEnum(rules, value, field, path);
    case 'duration':
      return checkOrdered(rules, durationNanos(value), durationRuleNanos, durationText, path, undefined);
    case 'timestamp':
      // A Timestamp rule is {seconds, nanos} since the epoch, the shape of a Duration rule.
      return checkOrdered(rules, BigInt(Date.parse(String(value))) * 1_000_000n, durationRuleNanos, timestampText, path, undefined);
    case 'any':
      return checkAny(rules, value, path);
    default:
      return;
  }
}

/**
 * const, lt, lte, gt, gte (with PGV's range wording when both ends are set) and in / not_in.
 * `zero`: the value that `ignore_empty` skips, for numbers.
 */
function checkOrdered<T extends number | bigint>(
  rules: JsonObject,
  value: T,
  parse: (rule: JsonValue) => T,
  show: (bound: T) => string,
  path: string,
  zero: T | undefined,
): void {
  if (rules['ignore_empty'] === true && zero !== undefined && value === zero) return;
  const bound = (key: string): T | undefined => (rules[key] === undefined ? undefined : parse(rules[key]!));
  const constant = bound('const');
  if (constant !== undefined && value !== constant) throw new FieldError(path, `value must equal ${show(constant)}`);
  const [lt, lte, gt, gte] = [bound('lt'), bound('lte'), bound('gt'), bound('gte')];
  const upper = lt ?? lte;
  const lower = gt ?? gte;
  const belowUpper = upper === undefined || (lt !== undefined ? value < lt : value <= lte!);
  const aboveLower = lower === undefined || (gt !== undefined ? value > gt : value >= gte!);
  if (upper !== undefined && lower !== undefined) {
    const open = gt !== undefined ? '(' : '[';
    const close = lt !== undefined ? ')' : ']';
    if (upper > lower) {
      if (!(belowUpper && aboveLower)) {
        throw new FieldError(path, `value must be inside range ${open}${show(lower)}, ${show(upper)}${close}`);
      }
    } else if (!belowUpper && !aboveLower) {
      // An upper bound below the lower one: the value must lie outside the gap between them.
      throw new FieldError(path, `value must be outside range ${lt !== undefined ? '[' : '('}${show(upper)}, ${show(lower)}${gt !== undefined ? ']' : ')'}`);
    }
  } else if (!belowUpper) {
    throw new FieldError(path, lt !== undefined ? `value must be less than ${show(lt)}` : `value must be less than or equal to ${show(lte!)}`);
  } else if (!aboveLower) {
    throw new FieldError(
      path,
      gt !== undefined ? `value must be greater than ${show(gt)}` : `value must be greater than or equal to ${show(gte!)}`,
    );
  }
  checkInList(rules, value, (item) => parse(item), show, path);
}

function checkInList<T>(rules: JsonObject, value: T, parse: (item: JsonValue) => T, show: (item: T) => string, path: string): void {
  const allowed = list(rules['in']).map(parse);
  if (allowed.length > 0 && !allowed.includes(value)) throw new FieldError(path, `value must be in list [${allowed.map(show).join(' ')}]`);
  const refused = list(rules['not_in']).map(parse);
  if (refused.includes(value)) throw new FieldError(path, `value must not be in list [${refused.map(show).join(' ')}]`);
}

function checkString(rules: JsonObject, value: string, path: string): void {
  if (rules['ignore_empty'] === true && value === '') return;
  const fail = (reason: string): never => {
    throw new FieldError(path, reason);
  };
  if (rules['const'] !== undefined && value !== rules['const']) fail(`value must equal ${JSON.stringify(rules['const'])}`);
  checkInList(rules, value, String, (item) => JSON.stringify(item), path);
  const runes = codePoints(value);
  const bytes = Buffer.byteLength(value);
  const num = (key: string): number | undefined => (rules[key] === undefined ? undefined : Number(rules[key]));
  const [len, minLen, maxLen, lenBytes, minBytes, maxBytes] = ['len', 'min_len', 'max_len', 'len_bytes', 'min_bytes', 'max_bytes'].map(num);
  if (len !== undefined && runes !== len) fail(`value length must be ${len} runes`);
  if (minLen !== undefined && maxLen !== undefined && (runes < minLen || runes > maxLen)) {
    fail(minLen === maxLen ? `value length must be ${minLen} runes` : `value length must be between ${minLen} and ${maxLen} runes, inclusive`);
  }
  if (minLen !== undefined && runes < minLen) fail(`value length must be at least ${minLen} runes`);
  if (maxLen !== undefined && runes > maxLen) fail(`value length must be at most ${maxLen} runes`);
  if (lenBytes !== undefined && bytes !== lenBytes) fail(`value length must be ${lenBytes} bytes`);
  if (minBytes !== undefined && maxBytes !== undefined && (bytes < minBytes || bytes > maxBytes)) {
    fail(minBytes === maxBytes ? `value length must be ${minBytes} bytes` : `value length must be between ${minBytes} and ${maxBytes} bytes, inclusive`);
  }
  if (minBytes !== undefined && bytes < minBytes) fail(`value length must be at least ${minBytes} bytes`);
  if (maxBytes !== undefined && bytes > maxBytes) fail(`value length must be at most ${maxBytes} bytes`);
  const text = (key: string): string | undefined => (typeof rules[key] === 'string' ? (rules[key] as string) : undefined);
  const [prefix, suffix, contains, notContains, pattern] = ['prefix', 'suffix', 'contains', 'not_contains', 'pattern'].map(text);
  if (prefix !== undefined && !value.startsWith(prefix)) fail(`value does not have prefix ${JSON.stringify(prefix)}`);
  if (suffix !== undefined && !value.endsWith(suffix)) fail(`value does not have suffix ${JSON.stringify(suffix)}`);
  if (contains !== undefined && !value.includes(contains)) fail(`value does not contain substring ${JSON.stringify(contains)}`);
  if (notContains !== undefined && value.includes(notContains)) fail(`value contains substring ${JSON.stringify(notContains)}`);
  // RE2, matched against the whole value as Envoy's (C++) validators do.
  if (pattern !== undefined && !SafeRegex.compile(pattern).fullMatch(value)) {
    fail(`value does not match regex pattern ${JSON.stringify(pattern)}`);
  }
  const wellKnown = wellKnownProblem(rules, value);
  if (wellKnown !== undefined) fail(wellKnown);
}

/** The well_known rules: addresses, hostnames and HTTP header names and values. */
function wellKnownProblem(rules: JsonObject, value: string): string | undefined {
  const strict = rules['strict'] !== false;
  switch (rules['well_known_regex']) {
    case 'HTTP_HEADER_NAME':
      return (strict ? HEADER_NAME_STRICT : HEADER_LOOSE).test(value) ? undefined : 'value must be a valid HTTP header name';
    case 'HTTP_HEADER_VALUE':
      return (strict ? HEADER_VALUE_STRICT : HEADER_LOOSE).test(value) ? undefined : 'value must be a valid HTTP header value';
  }
  const ipVersion = isIP(value);
  if (rules['ip'] === true && ipVersion === 0) return 'value must be a valid IP address';
  if (rules['ipv4'] === true && ipVersion !== 4) return 'value must be a valid IPv4 address';
  if (rules['ipv6'] === true && ipVersion !== 6) return 'value must be a valid IPv6 address';
  if (rules['hostname'] === true && !isHostname(value)) return 'value must be a valid hostname';
  if (rules['address'] === true && ipVersion === 0 && !isHostname(value)) return 'value must be a valid hostname, or ip address';
  if (rules['uuid'] === true && !/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(value)) {
    return 'value must be a valid UUID';
  }
  return undefined;
}

/** PGV's hostname: at most 253 characters, dot-separated labels of 1..63 [a-z0-9-], no edge hyphens. */
function isHostname(value: string): boolean {
  if (value.length > 253) return false;
  const host = value.toLowerCase().replace(/\.$/, '');
  return host.split('.').every((label) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(label));
}

function checkBytes(rules: JsonObject, value: Buffer, path: string): void {
  const num = (key: string): number | undefined => (rules[key] === undefined ? undefined : Number(rules[key]));
  const [len, minLen, maxLen] = ['len', 'min_len', 'max_len'].map(num);
  if (len !== undefined && value.length !== len) throw new FieldError(path, `value length must be ${len} bytes`);
  if (minLen !== undefined && value.length < minLen) throw new FieldError(path, `value length must be at least ${minLen} bytes`);
  if (maxLen !== undefined && value.length > maxLen) throw new FieldError(path, `value length must be at most ${maxLen} bytes`);
}

function checkEnum(rules: JsonObject, value: JsonValue, field: protobuf.Field, path: string): void {
  const type = field.resolvedType;
  if (!(type instanceof protobufLibrary().Enum)) return;
  const number = typeof value === 'number' ? value : type.values[String(value)];
  if (rules['defined_only'] === true && (number === undefined || type.valuesById[number] === undefined)) {
    throw new FieldError(path, 'value must be one of the defined enum values');
  }
  if (number === undefined) return;
  if (rules['const'] !== undefined && number !== Number(rules['const'])) throw new FieldError(path, `value must equal ${String(rules['const'])}`);
  checkInList(rules, number, Number, String, path);
}

function checkAny(rules: JsonObject, value: JsonValue, path: string): void {
  const url = isJsonObject(value) ? String(value['@type'] ?? '') : '';
  const allowed = list(rules['in']).map(String);
  if (allowed.length > 0 && !allowed.includes(url)) throw new FieldError(path, `type URL must be in list [${allowed.join(' ')}]`);
  const refused = list(rules['not_in']).map(String);
  if (refused.includes(url)) throw new FieldError(path, `type URL must not be in list [${refused.join(' ')}]`);
}

/** Unicode code points (PGV's runes): UTF-16 units less the second of each surrogate pair. */
function codePoints(value: string): number {
  let count = value.length;
  for (let i = 0; i < value.length - 1; i++) {
    const unit = value.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        i++;
      }
    }
  }
  return count;
}

function toBigInt(value: JsonValue): bigint {
  const text = String(value);
  return /^-?\d+$/.test(text) ? BigInt(text) : BigInt(Math.trunc(Number(text)));
}

/** A canonical ProtoJSON duration (`-1.5s`) in nanoseconds. */
function durationNanos(value: JsonValue): bigint {
  const match = /^(-?)(\d+)(?:\.(\d{1,9}))?s$/.exec(String(value));
  if (match === null) return 0n;
  const nanos = BigInt(match[2]!) * NANOS_PER_SECOND + BigInt((match[3] ?? '').padEnd(9, '0'));
  return match[1] === '-' ? -nanos : nanos;
}

/** A rule's Duration as the .proto writes it: `{}`, `{seconds: 1}`, `{nanos: 1000000}`. */
function durationRuleNanos(rule: JsonValue): bigint {
  const { seconds, nanos } = object(rule);
  return BigInt(String(seconds ?? 0)) * NANOS_PER_SECOND + BigInt(String(nanos ?? 0));
}

function timestampText(nanos: bigint): string {
  return new Date(Number(nanos / 1_000_000n)).toISOString();
}

/** Go's time.Duration spelling, which PGV's messages use: 0s, 1ms, 1.5s, 5m0s. */
export function durationText(nanos: bigint): string {
  if (nanos === 0n) return '0s';
  const sign = nanos < 0n ? '-' : '';
  const abs = nanos < 0n ? -nanos : nanos;
  if (abs < 1000n) return `${sign}${abs}ns`;
  if (abs < 1_000_000n) return `${sign}${decimal(abs, 1000n)}µs`;
  if (abs < NANOS_PER_SECOND) return `${sign}${decimal(abs, 1_000_000n)}ms`;
  const hours = abs / (3600n * NANOS_PER_SECOND);
  const minutes = (abs / (60n * NANOS_PER_SECOND)) % 60n;
  const seconds = abs % (60n * NANOS_PER_SECOND);
  const h = hours > 0n ? `${hours}h` : '';
  const m = hours > 0n || minutes > 0n ? `${minutes}m` : '';
  return `${sign}${h}${m}${decimal(seconds, NANOS_PER_SECOND)}s`;
}

function decimal(value: bigint, unit: bigint): string {
  const whole = value / unit;
  const fraction = value % unit;
  if (fraction === 0n) return String(whole);
  const digits = String(unit).length - 1;
  return `${whole}.${String(fraction).padStart(digits, '0').replace(/0+$/, '')}`;
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

// The checks of one value against one kind of its protoc-gen-validate rules (`string`, `uint32`,
// `duration`...), each compiled once per rule set into a function of the value: what a rule set
// asks is read once, not at every value of a 10,000-cluster bootstrap. Errors use PGV's wording,
// prefixed by the field path. Pure.

import { isIP } from 'node:net';
import type * as protobuf from 'protobufjs/light';
import { FieldError } from '../errors';
import { isJsonObject, JsonObject, JsonValue } from '../json';
import { protobufLibrary } from '../protobuf_library';
import { SafeRegex } from '../../regex/safe_regex';

/** Checks one (set) value at `path`; throws FieldError at the first rule it breaks. */
export type KindCheck = (value: JsonValue, field: protobuf.Field, path: string) => void;

const INTEGER_KINDS = new Set([
  'int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'fixed32', 'fixed64', 'sfixed32', 'sfixed64',
]);
const FLOAT_KINDS = new Set(['float', 'double']);

/** PGV's well-known regexes: strict (RFC 7230) and, with `strict: false`, only NUL, LF, CR refused. */
const HEADER_NAME_STRICT = /^:?[0-9a-zA-Z!#$%&'*+\-.^_|~`]+$/;
const HEADER_VALUE_STRICT = /^[^\u0000-\u0008\u000A-\u001F\u007F]*$/;
const HEADER_LOOSE = /^[^\u0000\u000A\u000D]*$/;
const WELL_KNOWN_RULES = ['well_known_regex', 'ip', 'ipv4', 'ipv6', 'hostname', 'address', 'uuid'];

const NANOS_PER_SECOND = 1_000_000_000n;

const NO_CHECK: KindCheck = () => undefined;

/** A rule set's value as an object ({} when unset or not one). */
export function objectOf(value: JsonValue | undefined): JsonObject {
  return isJsonObject(value) ? value : {};
}

function list(value: JsonValue | undefined): JsonValue[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

/** A proto3 scalar's value when unset, in its canonical JSON form. */
export function scalarDefault(kind: string): JsonValue | undefined {
  if (INTEGER_KINDS.has(kind) || FLOAT_KINDS.has(kind)) return 0;
  if (kind === 'string' || kind === 'bytes') return '';
  if (kind === 'bool') return false;
  return undefined;
}

/** The check of `kind`'s `rules` (a kind this build does not check: none). */
export function compileKindCheck(kind: string, rules: JsonObject): KindCheck {
  if (INTEGER_KINDS.has(kind)) {
    const check = orderedCheck(rules, toBigInt, String, 0n);
    return (value, _field, path) => check(toBigInt(value), path);
  }
  if (FLOAT_KINDS.has(kind)) {
    const check = orderedCheck(rules, Number, String, 0);
    return (value, _field, path) => check(Number(value), path);
  }
  switch (kind) {
    case 'bool': {
      const constant = rules['const'];
      if (constant === undefined) return NO_CHECK;
      return (value, _field, path) => {
        if (value !== constant) throw new FieldError(path, `value must equal ${String(constant)}`);
      };
    }
    case 'string':
      return stringCheck(rules);
    case 'bytes':
      return (value, _field, path) => checkBytes(rules, Buffer.from(String(value), 'base64'), path);
    case 'enum':
      return enumCheck(rules);
    case 'duration': {
      const check = orderedCheck(rules, durationRuleNanos, durationText, undefined);
      return (value, _field, path) => check(durationNanos(value), path);
    }
    case 'timestamp': {
      // A Timestamp rule is {seconds, nanos} since the epoch, the shape of a Duration rule.
      const check = orderedCheck(rules, durationRuleNanos, timestampText, undefined);
      return (value, _field, path) => check(BigInt(Date.parse(String(value))) * 1_000_000n, path);
    }
    case 'any':
      return (value, _field, path) => checkAny(rules, value, path);
    default:
      return NO_CHECK;
  }
}

/**
 * const, lt, lte, gt, gte (with PGV's range wording when both ends are set) and in / not_in.
 * `zero`: the value that `ignore_empty` skips, for numbers.
 */
function orderedCheck<T extends number | bigint>(
  rules: JsonObject,
  parse: (rule: JsonValue) => T,
  show: (bound: T) => string,
  zero: T | undefined,
): (value: T, path: string) => void {
  const ignoreEmpty = rules['ignore_empty'] === true && zero !== undefined;
  const bound = (key: string): T | undefined => (rules[key] === undefined ? undefined : parse(rules[key]!));
  const constant = bound('const');
  const [lt, lte, gt, gte] = [bound('lt'), bound('lte'), bound('gt'), bound('gte')];
  const upper = lt ?? lte;
  const lower = gt ?? gte;
  const inList = inListCheck(rules, parse, show);
  return (value, path) => {
    if (ignoreEmpty && value === zero) return;
    if (constant !== undefined && value !== constant) throw new FieldError(path, `value must equal ${show(constant)}`);
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
    inList(value, path);
  };
}

function inListCheck<T>(rules: JsonObject, parse: (item: JsonValue) => T, show: (item: T) => string): (value: T, path: string) => void {
  const allowed = list(rules['in']).map(parse);
  const refused = list(rules['not_in']).map(parse);
  if (allowed.length === 0 && refused.length === 0) return () => undefined;
  return (value, path) => {
    if (allowed.length > 0 && !allowed.includes(value)) throw new FieldError(path, `value must be in list [${allowed.map(show).join(' ')}]`);
    if (refused.includes(value)) throw new FieldError(path, `value must not be in list [${refused.map(show).join(' ')}]`);
  };
}

function stringCheck(rules: JsonObject): KindCheck {
  const ignoreEmpty = rules['ignore_empty'] === true;
  const constant = rules['const'];
  const inList = inListCheck(rules, String, (item) => JSON.stringify(item));
  const num = (key: string): number | undefined => (rules[key] === undefined ? undefined : Number(rules[key]));
  const [len, minLen, maxLen, lenBytes, minBytes, maxBytes] = ['len', 'min_len', 'max_len', 'len_bytes', 'min_bytes', 'max_bytes'].map(num);
  const countsRunes = len !== undefined || minLen !== undefined || maxLen !== undefined;
  const countsBytes = lenBytes !== undefined || minBytes !== undefined || maxBytes !== undefined;
  const text = (key: string): string | undefined => (typeof rules[key] === 'string' ? (rules[key] as string) : undefined);
  const [prefix, suffix, contains, notContains, pattern] = ['prefix', 'suffix', 'contains', 'not_contains', 'pattern'].map(text);
  // RE2, matched against the whole value as Envoy's (C++) validators do.
  const regex = pattern === undefined ? null : SafeRegex.compile(pattern);
  const wellKnown = WELL_KNOWN_RULES.some((key) => rules[key] !== undefined);
  return (raw, _field, path) => {
    const value = String(raw);
    if (ignoreEmpty && value === '') return;
    const fail = (reason: string): never => {
      throw new FieldError(path, reason);
    };
    if (constant !== undefined && value !== constant) fail(`value must equal ${JSON.stringify(constant)}`);
    inList(value, path);
    if (countsRunes) {
      const runes = codePoints(value);
      if (len !== undefined && runes !== len) fail(`value length must be ${len} runes`);
      if (minLen !== undefined && maxLen !== undefined && (runes < minLen || runes > maxLen)) {
        fail(minLen === maxLen ? `value length must be ${minLen} runes` : `value length must be between ${minLen} and ${maxLen} runes, inclusive`);
      }
      if (minLen !== undefined && runes < minLen) fail(`value length must be at least ${minLen} runes`);
      if (maxLen !== undefined && runes > maxLen) fail(`value length must be at most ${maxLen} runes`);
    }
    if (countsBytes) {
      const bytes = Buffer.byteLength(value);
      if (lenBytes !== undefined && bytes !== lenBytes) fail(`value length must be ${lenBytes} bytes`);
      if (minBytes !== undefined && maxBytes !== undefined && (bytes < minBytes || bytes > maxBytes)) {
        fail(minBytes === maxBytes ? `value length must be ${minBytes} bytes` : `value length must be between ${minBytes} and ${maxBytes} bytes, inclusive`);
      }
      if (minBytes !== undefined && bytes < minBytes) fail(`value length must be at least ${minBytes} bytes`);
      if (maxBytes !== undefined && bytes > maxBytes) fail(`value length must be at most ${maxBytes} bytes`);
    }
    if (prefix !== undefined && !value.startsWith(prefix)) fail(`value does not have prefix ${JSON.stringify(prefix)}`);
    if (suffix !== undefined && !value.endsWith(suffix)) fail(`value does not have suffix ${JSON.stringify(suffix)}`);
    if (contains !== undefined && !value.includes(contains)) fail(`value does not contain substring ${JSON.stringify(contains)}`);
    if (notContains !== undefined && value.includes(notContains)) fail(`value contains substring ${JSON.stringify(notContains)}`);
    if (regex !== null && !regex.fullMatch(value)) fail(`value does not match regex pattern ${JSON.stringify(pattern)}`);
    if (!wellKnown) return;
    const problem = wellKnownProblem(rules, value);
    if (problem !== undefined) fail(problem);
  };
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

function enumCheck(rules: JsonObject): KindCheck {
  const { Enum } = protobufLibrary();
  const definedOnly = rules['defined_only'] === true;
  const constant = rules['const'] === undefined ? undefined : Number(rules['const']);
  const inList = inListCheck(rules, Number, String);
  return (value, field, path) => {
    const type = field.resolvedType;
    if (!(type instanceof Enum)) return;
    const number = typeof value === 'number' ? value : type.values[String(value)];
    if (definedOnly && (number === undefined || type.valuesById[number] === undefined)) {
      throw new FieldError(path, 'value must be one of the defined enum values');
    }
    if (number === undefined) return;
    if (constant !== undefined && number !== constant) throw new FieldError(path, `value must equal ${String(rules['const'])}`);
    inList(number, path);
  };
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
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
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
  const { seconds, nanos } = objectOf(rule);
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

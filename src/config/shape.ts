// The fields a message may carry in this build, as data (a Shape), and the check that refuses,
// by field path, whatever else a decoded message holds: a field the proxy would decode and then
// ignore. The bootstrap's core messages declare their shapes in capabilities.ts, each extension
// the shape of its typed_config in its descriptor (extension.ts). Pure.

import { FieldError, FieldErrorCollector } from './errors';
import { childPath, indexPath, keyPath } from './field_path';
import { isJsonObject, JsonObject } from './json';

/**
 * A field refused for a reason of its own (Envoy ignores it there, say), not merely because
 * this build has not got to it yet.
 */
export interface Refused {
  readonly refused: string;
}
/** A field whose content a function of its own checks. */
export interface Checked {
  readonly check: (value: unknown, path: string) => void;
}
/** A map whose values are Any (typed_per_filter_config): each is checked by the shape of its `@type`. */
export interface TypedMap {
  readonly typedMap: true;
}

export type AllowedValues = Readonly<Record<string, readonly string[]>>;

export type FieldRule = Shape | 'leaf' | { readonly list: Shape | 'leaf' } | Refused | Checked | TypedMap;

/** The fields a message may carry, and the shapes of those that are messages themselves. */
export interface Shape {
  readonly fields: Readonly<Record<string, FieldRule>>;
  /** Enum or string fields restricted to some values, which may depend on the message's other fields. */
  readonly values?: AllowedValues | ((message: JsonObject) => AllowedValues);
}

export const leaf = 'leaf' as const;
export const list = (shape: Shape | 'leaf') => ({ list: shape });
export const refused = (reason: string): Refused => ({ refused: reason });
/** Any content: what is inside is checked elsewhere (an extension's typed_config, by its type). */
export const anyContent: Shape = { fields: {} };
export const typedMap: TypedMap = { typedMap: true };

/**
 * The shape of a typed_config by its `@type` URL; undefined for a type no extension of this
 * build takes (validation refuses those by name or type).
 */
export type TypedConfigShapes = (typeUrl: string) => Shape | undefined;

function notImplemented(path: string, what: string): FieldError {
  return new FieldError(path, `${what} is not implemented by this build yet (it would be ignored)`);
}

/** Collects into `errors` a FieldError for each field of `message` (at `path`) that `shape` refuses. */
export function checkShape(message: JsonObject, shape: Shape, path: string, errors: FieldErrorCollector, typedConfigs: TypedConfigShapes): void {
  if (shape === anyContent) return;
  const values = typeof shape.values === 'function' ? shape.values(message) : shape.values;
  for (const [key, value] of Object.entries(message)) {
    errors.run(() => checkField(shape, values, key, value, childPath(path, key), errors, typedConfigs));
  }
}

function checkField(
  shape: Shape,
  values: AllowedValues | undefined,
  key: string,
  value: unknown,
  fieldPath: string,
  errors: FieldErrorCollector,
  typedConfigs: TypedConfigShapes,
): void {
  if (key === 'typed_config' && isJsonObject(value)) {
    checkTyped(value, fieldPath, errors, typedConfigs);
    return;
  }
  const rule = shape.fields[key];
  if (rule === undefined) throw notImplemented(fieldPath, key);
  if (rule !== 'leaf' && 'refused' in rule) throw new FieldError(fieldPath, `${key} ${rule.refused}`);
  if (rule !== 'leaf' && 'check' in rule) {
    rule.check(value, fieldPath);
    return;
  }
  if (rule !== 'leaf' && 'typedMap' in rule) {
    if (!isJsonObject(value)) return;
    for (const [entryKey, entry] of Object.entries(value)) {
      if (isJsonObject(entry)) checkTyped(entry, keyPath(fieldPath, entryKey), errors, typedConfigs);
    }
    return;
  }
  const allowed = values?.[key];
  if (allowed && !allowed.includes(String(value))) throw notImplemented(fieldPath, `${key} ${String(value)}`);
  if (rule === 'leaf') return;
  if ('list' in rule) {
    const element = rule.list;
    if (element === 'leaf' || !Array.isArray(value)) return;
    value.forEach((item, i) => {
      if (isJsonObject(item)) checkShape(item, element, indexPath(fieldPath, i), errors, typedConfigs);
    });
  } else if (isJsonObject(value)) {
    checkShape(value, rule, fieldPath, errors, typedConfigs);
  }
}

/** An Any at `path`, by the shape of its type; one of a type no extension takes is left to validation. */
function checkTyped(value: JsonObject, path: string, errors: FieldErrorCollector, typedConfigs: TypedConfigShapes): void {
  const inner = typedConfigs(String(value['@type']));
  if (inner) checkShape(value, { ...inner, fields: { '@type': leaf, ...inner.fields } }, path, errors, typedConfigs);
}

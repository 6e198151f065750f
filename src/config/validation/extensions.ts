// Rules shared by every extension site: known names, typed_config of the right type, and the
// terminal filter at the end of a filter chain; and the HTTP filters' per-route configs.

import type { ConfigExtensions, ExtensionCategory, ExtensionDescriptor, ValidationContext } from '../extension';
import { FieldError } from '../errors';
import { childPath, keyPath } from '../field_path';
import { isJsonObject, JsonObject, messageField, stringField } from '../json';
import { typeNameOfUrl } from '../names';
import { protoSchema } from '../schema';
import { checkMessageProtoRules } from './proto_rules';

/** Reason of the error for an extension name we do not implement (Envoy's wording). */
export function unknownExtension(name: string): string {
  return `Didn't find a registered implementation for name: '${name}'`;
}

/** Reason of the error for a filter chain that does not end with its terminal filter. */
export function terminalFilterNotLast(name: string, chain: 'network' | 'http'): string {
  return `terminal filter named ${name} must be the last filter in a ${chain} filter chain`;
}

/**
 * The typed_config of `extension` at `path`, checked to be a `typeName`; an empty object when
 * unset, which for every type means "all defaults".
 */
export function typedConfig(extension: JsonObject, path: string, typeName: string): JsonObject {
  return anyOfType(messageField(extension, 'typed_config'), childPath(path, 'typed_config'), typeName, stringField(extension, 'name'));
}

/**
 * An Any at `path` checked to be a `typeName` (`owner` names what configures it); an empty object
 * when unset or without a value. That one is the type's default message, which Envoy validates as
 * it validates any: the protos' rules, checked on the loaded file before, are checked on it here.
 */
function anyOfType(any: JsonObject | undefined, path: string, typeName: string, owner: string): JsonObject {
  const url = any === undefined ? '' : stringField(any, '@type');
  if (any === undefined || url === '') {
    if (typeName !== '') checkMessageProtoRules(protoSchema(), typeName, {}, path);
    return {};
  }
  if (typeNameOfUrl(url) !== typeName) throw new FieldError(childPath(path, '@type'), `expected type ${typeName} for ${owner}, got '${url}'`);
  return any;
}

/**
 * The extension of `category` configured at `path`, its name canonicalized: one this build
 * registers, with a typed_config of its type that its own rules accept.
 * @throws FieldError
 */
export function validateExtension<C extends ExtensionCategory>(category: C, extension: JsonObject, path: string, context: ValidationContext): void {
  const name = stringField(extension, 'name');
  const descriptor = context.extensions.get(category, name);
  if (descriptor === undefined) throw new FieldError(childPath(path, 'name'), unknownExtension(name));
  validateConfigOf(descriptor, extension, path, context);
}

/** `extension`'s typed_config, checked to be its descriptor's type and by its descriptor's rules. */
export function validateConfigOf(descriptor: ExtensionDescriptor<ExtensionCategory>, extension: JsonObject, path: string, context: ValidationContext): void {
  const config = typedConfig(extension, path, descriptor.configType ?? '');
  descriptor.validate?.(config, childPath(path, 'typed_config'), context);
}

/**
 * The typed_per_filter_config of `holder` (a virtual host, route or weighted cluster) at `path`:
 * each key names an HTTP filter of this build (by any of its names, as Envoy 1.16 canonicalizes
 * them) that reads a per-route config, no filter twice, and each value is of that config's type
 * and passes its descriptor's rules.
 */
export function validatePerFilterConfigs(holder: JsonObject, path: string, context: ValidationContext): void {
  const configs = messageField(holder, 'typed_per_filter_config');
  if (configs === undefined) return;
  const mapPath = childPath(path, 'typed_per_filter_config');
  const keys = new Map<string, string>();
  for (const [key, value] of Object.entries(configs)) {
    const entryPath = keyPath(mapPath, key);
    const name = context.extensions.canonicalName(key);
    const perRoute = context.extensions.get('proxy.filters.http', name)?.perRoute;
    if (perRoute === undefined) throw new FieldError(entryPath, noPerRouteConfig(key, context.extensions));
    const earlier = keys.get(name);
    if (earlier !== undefined) throw new FieldError(entryPath, `'${key}' and '${earlier}' name the same filter`);
    keys.set(name, key);
    const config = anyOfType(isJsonObject(value) ? value : undefined, entryPath, perRoute.configType, key);
    perRoute.validate?.(config, entryPath, context);
  }
}

/** Why a typed_per_filter_config (or v2 per_filter_config) key that names no filter with a per-route config is refused. */
export function noPerRouteConfig(key: string, extensions: ConfigExtensions): string {
  if (extensions.get('proxy.filters.http', extensions.canonicalName(key)) === undefined) return unknownExtension(key);
  return `the filter '${key}' takes no per-route configuration in this build (it would be ignored)`;
}

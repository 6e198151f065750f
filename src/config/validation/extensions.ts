// Rules shared by every extension site: known names, typed_config of the right type, and the
// terminal filter at the end of a filter chain.

import type { ExtensionCategory, ExtensionDescriptor, ValidationContext } from '../extension';
import { FieldError } from '../errors';
import { childPath } from '../field_path';
import { JsonObject, messageField, stringField } from '../json';
import { typeNameOfUrl } from '../names';

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
  const config = messageField(extension, 'typed_config');
  const url = config === undefined ? '' : stringField(config, '@type');
  if (config === undefined || url === '') return {};
  if (typeNameOfUrl(url) !== typeName) {
    throw new FieldError(
      childPath(childPath(path, 'typed_config'), '@type'),
      `expected type ${typeName} for ${stringField(extension, 'name')}, got '${url}'`,
    );
  }
  return config;
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

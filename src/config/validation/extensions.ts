// Rules shared by every extension site: known names, typed_config of the right type, and the
// terminal filter at the end of a filter chain.

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

// A list of HeaderValueOption (`*_headers_to_add`) as the route configuration and HTTP filters
// configure it: Envoy 1.16's rules for it (HeaderParser::configure) and its model.

import { atField, FieldError } from '../../config/errors';
import { childPath, indexPath } from '../../config/field_path';
import { boolField, JsonObject, messageField, messageList, stringField } from '../../config/json';
import type { HeaderValueOption } from '../../config/model';
import { type HeaderFormatter, parseHeaderFormat } from '../../filters/http/header_format';

/**
 * `config[field]`'s options: pseudo-headers stay, and each value must parse.
 * @returns each option's parsed value, for a caller with rules of its own
 */
export function validateHeaderValueOptions(config: JsonObject, field: string, path: string): HeaderFormatter[] {
  return messageList(config, field).map((option, i) => {
    const headerPath = childPath(indexPath(childPath(path, field), i), 'header');
    const header = messageField(option, 'header') ?? {};
    if (stringField(header, 'key').startsWith(':')) throw new FieldError(childPath(headerPath, 'key'), ':-prefixed headers may not be modified');
    return atField(childPath(headerPath, 'value'), () => parseHeaderFormat(stringField(header, 'value')));
  });
}

/** `config[field]`'s options, names in lower case. */
export function headerValueOptions(config: JsonObject, field: string): HeaderValueOption[] {
  return messageList(config, field).map((option): HeaderValueOption => {
    const header = messageField(option, 'header') ?? {};
    // append is a BoolValue: unset is true.
    return { name: stringField(header, 'key').toLowerCase(), value: stringField(header, 'value'), append: boolField(option, 'append', true) };
  });
}

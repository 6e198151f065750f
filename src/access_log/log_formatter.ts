// How an access log line is written (Envoy 1.16's FormatterImpl and JsonFormatterImpl): a
// format string, or a JSON object whose values are format strings, one object a line. Built
// once from the configuration; format() runs per logged stream. A line is a byte string
// (src/common/byte_string.ts): header values as they came, the configuration's text as UTF-8.

import { utf8Bytes } from '../common/byte_string';
import { atField, FieldError } from '../config/errors';
import { keyPath } from '../config/field_path';
import { isJsonObject, type JsonObject, type JsonValue } from '../config/json';
import type { FormatContext, FormatterProvider } from './format_context';
import { parseFormat } from './substitution_format';

/** Envoy's default format, with our header names. */
export const DEFAULT_FORMAT =
  '[%START_TIME%] "%REQ(:METHOD)% %REQ(X-PROXY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" ' +
  '%RESPONSE_CODE% %RESPONSE_FLAGS% %BYTES_RECEIVED% %BYTES_SENT% %DURATION% ' +
  '%RESP(X-PROXY-UPSTREAM-SERVICE-TIME)% ' +
  '"%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" ' +
  '"%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%"\n';

/** What an unset value prints as; omit_empty_values prints nothing instead. */
const UNSET = '-';

export interface LogFormatter {
  /** One entry as a byte string, with its newline when the format has one (a text format need not). */
  format(context: FormatContext): string;
}

/** The model of a log format, as the configuration gives it. */
export type LogFormat =
  | { readonly kind: 'text'; readonly format: string; readonly omitEmptyValues: boolean }
  /** `typed`: numbers stay numbers and unset values are null (typed_json_format, log_format's json_format). */
  | { readonly kind: 'json'; readonly format: JsonObject; readonly typed: boolean; readonly omitEmptyValues: boolean };

/** @throws FieldError at the path of the offending part of the format, relative to it */
export function createFormatter(format: LogFormat): LogFormatter {
  return format.kind === 'text' ? new TextFormatter(format.format, format.omitEmptyValues) : new JsonFormatter(format.format, format.typed, format.omitEmptyValues);
}

export class TextFormatter implements LogFormatter {
  private readonly providers: readonly FormatterProvider[];
  private readonly unset: string;

  constructor(format: string, omitEmptyValues: boolean) {
    this.providers = parseFormat(format);
    this.unset = omitEmptyValues ? '' : UNSET;
  }

  format(context: FormatContext): string {
    return joinText(this.providers, context, this.unset);
  }
}

function joinText(providers: readonly FormatterProvider[], context: FormatContext, unset: string): string {
  let line = '';
  for (const provider of providers) line += provider.literal ?? provider.text(context) ?? unset;
  return line;
}

/** A JSON format compiled: each string value's providers, nested objects as they nest. */
type Template = readonly TemplateEntry[];
/** `key` is the key's JSON, made once. */
type TemplateEntry = { readonly key: string; readonly providers: readonly FormatterProvider[] } | { readonly key: string; readonly nested: Template };

export class JsonFormatter implements LogFormatter {
  private readonly template: Template;

  constructor(
    format: JsonObject,
    private readonly typed: boolean,
    private readonly omitEmptyValues: boolean,
  ) {
    this.template = compileTemplate(format);
  }

  format(context: FormatContext): string {
    return `${this.object(this.template, context)}\n`;
  }

  /** The object as JSON text, its keys in the configured order. */
  private object(template: Template, context: FormatContext): string {
    let out = '';
    for (const entry of template) {
      const value = 'nested' in entry ? this.object(entry.nested, context) : this.value(entry.providers, context);
      if (value === null) continue;
      out += `${out === '' ? '' : ','}${entry.key}:${value}`;
    }
    return `{${out}}`;
  }

  /** One string value's JSON; null when omit_empty_values leaves its key out. */
  private value(providers: readonly FormatterProvider[], context: FormatContext): string | null {
    if (providers.length > 1) {
      // Several pieces make a string, whatever their types.
      return JSON.stringify(joinText(providers, context, this.omitEmptyValues ? '' : UNSET));
    }
    const provider = providers[0]!;
    let value: JsonValue;
    if (this.typed) value = provider.value(context);
    else {
      const text = provider.text(context);
      value = text === null && !this.omitEmptyValues ? UNSET : text;
    }
    if (value === null && this.omitEmptyValues) return null;
    return JSON.stringify(value);
  }
}

function compileTemplate(format: JsonObject): Template {
  return Object.entries(format).map(([name, value]) =>
    atField(keyPath('', name), (): TemplateEntry => {
      const key = JSON.stringify(utf8Bytes(name));
      if (typeof value === 'string') return { key, providers: parseFormat(value) };
      if (isJsonObject(value)) return { key, nested: compileTemplate(value) };
      throw new FieldError('', 'Only string values or nested structs are supported in the JSON access log format.');
    }),
  );
}

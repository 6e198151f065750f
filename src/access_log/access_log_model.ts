// Access logs (config.accesslog.v3.AccessLog, decoded and upgraded to v3) read into their
// models, with the checks Envoy 1.16's factories make: the file logger's shape, its format
// compiled, its model; the filter's kinds and values, whatever the logger. Pure; FieldErrors
// carry paths relative to the message they are given.

import { atField, FieldError } from '../config/errors';
import { childPath, indexPath } from '../config/field_path';
import { boolField, enumField, isJsonObject, type JsonObject, messageField, messageList, numberField, stringField } from '../config/json';
import type { PercentDenominator } from '../config/model';
import { headerMatch, validateHeaderMatcher } from '../config/header_matcher';
import { responseFlagOfName } from '../stream_info/response_flag_names';
import type { AccessLogFilterConfig, Comparison, FileAccessLogConfig } from './access_log_config';
import { GRPC_STATUS_NAMES } from './grpc_status';
import { createFormatter, DEFAULT_FORMAT, type LogFormat } from './log_formatter';

export const FILE_ACCESS_LOG = 'proxy.access_loggers.file';
export const FILE_ACCESS_LOG_TYPE = 'envoy.extensions.access_loggers.file.v3.FileAccessLog';
/** The name Envoy 1.16 still accepted from before its extension naming scheme. */
export const LEGACY_FILE_ACCESS_LOG = 'envoy.file_access_log';

const leaf = 'leaf' as const;

// FileAccessLog as Envoy 1.16 has it. SubstitutionFormatString's text_format_source and
// formatters came later; content_type sets a local reply's, and an access log has none.
export const FILE_ACCESS_LOG_SHAPE = {
  fields: {
    path: leaf,
    format: leaf,
    json_format: leaf,
    typed_json_format: leaf,
    log_format: {
      fields: {
        text_format: leaf,
        json_format: leaf,
        omit_empty_values: leaf,
        content_type: { refused: 'sets the content type of a local reply; Envoy ignores it in an access log (it would be ignored)' },
      },
    },
  },
};

/** The filters of config.accesslog.v3.AccessLogFilter this build cannot evaluate, and why. */
const REFUSED_FILTERS: Readonly<Record<string, string>> = {
  extension_filter: 'extension filters are not implemented by this build (it would be ignored)',
  metadata_filter: 'the metadata filter is not implemented by this build (it would be ignored)',
};

/** An AccessLog's fields; its filter is checked whole, by the model that reads it. */
/**
 * FileAccessLog at `path`: a path, and a format that compiles.
 * @throws FieldError at the field of the format
 */
export function validateFileAccessLog(typed: JsonObject, path: string): void {
  if (stringField(typed, 'path') === '') throw new FieldError(childPath(path, 'path'), 'the file access log needs a path');
  const format = fileAccessLogModel(typed).format;
  atField(childPath(path, formatField(typed)), () => createFormatter(format));
}

/** The model of a validated FileAccessLog. */
export function fileAccessLogModel(typed: JsonObject): FileAccessLogConfig {
  return { name: FILE_ACCESS_LOG, path: stringField(typed, 'path'), format: logFormat(typed) };
}

/** The field the format came from, where its errors are reported. */
function formatField(typed: JsonObject): string {
  for (const key of ['format', 'json_format', 'typed_json_format']) if (typed[key] !== undefined) return key;
  const logFormat = messageField(typed, 'log_format');
  if (logFormat === undefined) return 'format';
  return logFormat['json_format'] !== undefined ? 'log_format.json_format' : 'log_format.text_format';
}

/** FileAccessLog's access_log_format oneof; none (or an empty format) is Envoy's default. */
function logFormat(typed: JsonObject): LogFormat {
  const json = messageField(typed, 'json_format');
  if (json !== undefined) return { kind: 'json', format: json, typed: false, omitEmptyValues: false };
  const typedJson = messageField(typed, 'typed_json_format');
  if (typedJson !== undefined) return { kind: 'json', format: typedJson, typed: true, omitEmptyValues: false };
  const substitution = messageField(typed, 'log_format');
  if (substitution !== undefined) {
    // SubstitutionFormatString's json_format keeps types, as 1.16's fromProtoConfig has it.
    const omitEmptyValues = boolField(substitution, 'omit_empty_values');
    const structured = messageField(substitution, 'json_format');
    if (structured !== undefined) return { kind: 'json', format: structured, typed: true, omitEmptyValues };
    return { kind: 'text', format: stringField(substitution, 'text_format'), omitEmptyValues };
  }
  const text = stringField(typed, 'format');
  return { kind: 'text', format: text === '' ? DEFAULT_FORMAT : text, omitEmptyValues: false };
}

/** @throws FieldError (relative to the AccessLogFilter) */
export function accessLogFilterModel(config: JsonObject): AccessLogFilterConfig {
  const kinds = Object.keys(config);
  if (kinds.length !== 1) throw new FieldError('', 'exactly one filter kind must be set');
  const kind = kinds[0]!;
  const refused = REFUSED_FILTERS[kind];
  if (refused !== undefined) throw new FieldError(kind, refused);
  const body = config[kind];
  if (!isJsonObject(body)) throw new FieldError(kind, 'expected an object');
  return atField(kind, () => filterOfKind(kind, body));
}

function filterOfKind(kind: string, body: JsonObject): AccessLogFilterConfig {
  switch (kind) {
    case 'status_code_filter':
      return { kind: 'status_code', comparison: comparison(body) };
    case 'duration_filter':
      return { kind: 'duration', comparison: comparison(body) };
    case 'not_health_check_filter':
      return { kind: 'not_health_check' };
    case 'traceable_filter':
      return { kind: 'traceable' };
    case 'runtime_filter': {
      const runtimeKey = stringField(body, 'runtime_key');
      if (runtimeKey === '') throw new FieldError('runtime_key', 'a runtime key is required');
      const percent = messageField(body, 'percent_sampled') ?? {};
      return {
        kind: 'runtime',
        runtimeKey,
        percentSampled: { numerator: numberField(percent, 'numerator'), denominator: enumField<PercentDenominator>(percent, 'denominator', 'HUNDRED') },
        useIndependentRandomness: boolField(body, 'use_independent_randomness'),
      };
    }
    case 'and_filter':
    case 'or_filter': {
      const filters = messageList(body, 'filters');
      if (filters.length < 2) throw new FieldError('filters', 'an and_filter or or_filter takes at least 2 filters');
      return {
        kind: kind === 'and_filter' ? 'and' : 'or',
        filters: filters.map((filter, i) => atField(indexPath('filters', i), () => accessLogFilterModel(filter))),
      };
    }
    case 'header_filter': {
      const header = messageField(body, 'header');
      if (header === undefined) throw new FieldError('header', 'a header matcher is required');
      validateHeaderMatcher(header, 'header');
      return { kind: 'header', header: headerMatch(header) };
    }
    case 'response_flag_filter': {
      let flags = 0;
      (Array.isArray(body['flags']) ? body['flags'] : []).forEach((name, i) => {
        const flag = typeof name === 'string' ? responseFlagOfName(name) : undefined;
        if (flag === undefined) throw new FieldError(indexPath('flags', i), `'${String(name)}' is not a response flag of Envoy 1.16`);
        flags |= flag;
      });
      return { kind: 'response_flag', flags };
    }
    case 'grpc_status_filter': {
      const statuses = (Array.isArray(body['statuses']) ? body['statuses'] : []).map((status, i) => {
        const code = typeof status === 'number' ? status : GRPC_STATUS_NAMES.indexOf(String(status) as (typeof GRPC_STATUS_NAMES)[number]);
        if (code < 0 || code >= GRPC_STATUS_NAMES.length) throw new FieldError(indexPath('statuses', i), `'${String(status)}' is not a gRPC status`);
        return code;
      });
      return { kind: 'grpc_status', statuses, exclude: boolField(body, 'exclude') };
    }
  }
  throw new FieldError('', `${kind} is not an access log filter of Envoy 1.16`);
}

/** config.accesslog.v3.ComparisonFilter: `comparison.op` and `comparison.value` (a RuntimeUInt32). */
function comparison(body: JsonObject): Comparison {
  const config = messageField(body, 'comparison');
  if (config === undefined) throw new FieldError('comparison', 'a comparison is required');
  const value = messageField(config, 'value');
  if (value === undefined) throw new FieldError(childPath('comparison', 'value'), 'a value is required');
  return {
    op: enumField<Comparison['op']>(config, 'op', 'EQ'),
    defaultValue: numberField(value, 'default_value'),
    runtimeKey: stringField(value, 'runtime_key'),
  };
}

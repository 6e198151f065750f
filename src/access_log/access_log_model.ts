// A configured access log (config.accesslog.v3.AccessLog, decoded and upgraded to v3) read into
// its model, with the checks Envoy 1.16's factories make: the logger found by its typed_config's
// type or by name, its format compiled, its filter's kinds and values. Pure; FieldErrors carry
// paths relative to the AccessLog message.

import { atField, FieldError } from '../config/errors';
import { childPath, indexPath } from '../config/field_path';
import { boolField, enumField, isJsonObject, type JsonObject, messageField, messageList, numberField, stringField } from '../config/json';
import type { PercentDenominator } from '../config/model';
import { headerMatch } from '../config/model_builder';
import { canonicalExtensionName, envoyTypeName, typeNameOfUrl } from '../config/names';
import { validateHeaderMatcher } from '../config/validation/health_check';
import { responseFlagOfName } from '../stream_info/response_flag_names';
import type { AccessLogConfig, AccessLogFilterConfig, Comparison } from './access_log_config';
import { GRPC_STATUS_NAMES } from './grpc_status';
import { createFormatter, DEFAULT_FORMAT, type LogFormat } from './log_formatter';

export const FILE_ACCESS_LOG = 'proxy.access_loggers.file';
export const FILE_ACCESS_LOG_TYPE = 'envoy.extensions.access_loggers.file.v3.FileAccessLog';
/** The name Envoy 1.16 still accepted from before its extension naming scheme. */
const LEGACY_FILE_ACCESS_LOG = 'envoy.file_access_log';

/** The filters of config.accesslog.v3.AccessLogFilter this build cannot evaluate, and why. */
const REFUSED_FILTERS: Readonly<Record<string, string>> = {
  extension_filter: 'extension filters are not implemented by this build (it would be ignored)',
  metadata_filter: 'the metadata filter is not implemented by this build (it would be ignored)',
};

/** The registry name of an access log: the file logger's, found by name or typed_config type, or its own. */
export function accessLoggerName(config: JsonObject): string {
  const written = stringField(config, 'name');
  const name = written === LEGACY_FILE_ACCESS_LOG ? FILE_ACCESS_LOG : canonicalExtensionName(written);
  const url = stringField(messageField(config, 'typed_config') ?? {}, '@type');
  if (url !== '' && envoyTypeName(typeNameOfUrl(url)) === FILE_ACCESS_LOG_TYPE) return FILE_ACCESS_LOG;
  return name;
}

/** @throws FieldError (relative to the AccessLog) for what Envoy 1.16 refuses or this build cannot run */
export function accessLogModel(config: JsonObject): AccessLogConfig {
  const name = accessLoggerName(config);
  if (name !== FILE_ACCESS_LOG) {
    throw new FieldError('name', `Didn't find a registered implementation for name: '${stringField(config, 'name')}'`);
  }
  const typed = messageField(config, 'typed_config');
  const path = typed === undefined ? '' : stringField(typed, 'path');
  if (path === '') throw new FieldError('typed_config.path', 'the file access log needs a path');
  const format = atField('typed_config', () => logFormat(typed!));
  atField(formatPath(typed!), () => createFormatter(format));
  const filter = messageField(config, 'filter');
  return { name, path, format, filter: filter === undefined ? null : atField('filter', () => filterModel(filter)) };
}

/** The field the format came from, where its errors are reported. */
function formatPath(typed: JsonObject): string {
  for (const key of ['format', 'json_format', 'typed_json_format']) if (typed[key] !== undefined) return `typed_config.${key}`;
  const logFormat = messageField(typed, 'log_format');
  if (logFormat === undefined) return 'typed_config';
  return logFormat['json_format'] !== undefined ? 'typed_config.log_format.json_format' : 'typed_config.log_format.text_format';
}

/** FileAccessLog's access_log_format oneof; none (or an empty format) is Envoy's default. */
function logFormat(typed: JsonObject): LogFormat {
  const json = messageField(typed, 'json_format');
  if (json !== undefined) return { kind: 'json', format: json, typed: false, omitEmptyValues: false };
  const typedJson = messageField(typed, 'typed_json_format');
  if (typedJson !== undefined) return { kind: 'json', format: typedJson, typed: true, omitEmptyValues: false };
  const substitution = messageField(typed, 'log_format');
  if (substitution !== undefined) return atField('log_format', () => substitutionFormat(substitution));
  const text = stringField(typed, 'format');
  return { kind: 'text', format: text === '' ? DEFAULT_FORMAT : text, omitEmptyValues: false };
}

/** config.core.v3.SubstitutionFormatString as 1.16 has it; its json_format keeps types. */
function substitutionFormat(config: JsonObject): LogFormat {
  for (const key of ['text_format_source', 'formatters']) {
    if (config[key] !== undefined) throw new FieldError(key, `${key} came after Envoy 1.16 and is not implemented by this build (it would be ignored)`);
  }
  const omitEmptyValues = boolField(config, 'omit_empty_values');
  const json = messageField(config, 'json_format');
  if (json !== undefined) return { kind: 'json', format: json, typed: true, omitEmptyValues };
  return { kind: 'text', format: stringField(config, 'text_format'), omitEmptyValues };
}

function filterModel(config: JsonObject): AccessLogFilterConfig {
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
        filters: filters.map((filter, i) => atField(indexPath('filters', i), () => filterModel(filter))),
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

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FieldError } from '../../src/config/errors';
import type { JsonObject } from '../../src/config/json';
import { FILE_ACCESS_LOG } from '../../src/access_log/access_log_model';
import { validateExtension } from '../../src/config/validation/extensions';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';
import { DEFAULT_FORMAT } from '../../src/access_log/log_formatter';
import type { FileAccessLogConfig } from '../../src/access_log/access_log_config';

const extensions = builtinExtensions();
/** An access_log entry as the pipeline checks it, then its logger's model. */
const loggerModel = (written: JsonObject): FileAccessLogConfig => {
  // Loading canonicalizes the names before validation does.
  const config = { ...written, name: extensions.registeredName('proxy.access_loggers', written) };
  validateExtension('proxy.access_loggers', config, '', { clusters: new Set(), plaintextClusters: new Set(), extensions, configSources: { primaryClusters: new Map(), hasAdsConfig: false } });
  return extensions.model('proxy.access_loggers', config) as FileAccessLogConfig;
};
const formatOf = (config: JsonObject) => loggerModel(config).format;

const FILE_TYPE = 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog';

const fileLog = (typed: JsonObject, name = 'envoy.access_loggers.file'): JsonObject => ({ name, typed_config: { '@type': FILE_TYPE, path: '/tmp/x.log', ...typed } });

test('the file logger is found by any of its names or by its type URL', () => {
  for (const name of ['proxy.access_loggers.file', 'envoy.access_loggers.file', 'envoy.file_access_log']) {
    assert.equal(extensions.registeredName('proxy.access_loggers', { name }), FILE_ACCESS_LOG);
  }
  assert.equal(extensions.registeredName('proxy.access_loggers', fileLog({}, 'my_log')), FILE_ACCESS_LOG);
  assert.equal(extensions.registeredName('proxy.access_loggers', { name: 'envoy.access_loggers.http_grpc' }), 'proxy.access_loggers.http_grpc');
  assert.throws(
    () => loggerModel({ name: 'envoy.access_loggers.http_grpc', typed_config: { '@type': 'type.googleapis.com/x.Y' } }),
    (e: unknown) => e instanceof FieldError && e.fieldPath === 'name' && /Didn't find a registered implementation for name: 'proxy.access_loggers.http_grpc'/.test(e.reason),
  );
});

test('formats: none or empty is the default; format, json_format, typed_json_format, log_format', () => {
  assert.deepEqual(formatOf(fileLog({})), { kind: 'text', format: DEFAULT_FORMAT, omitEmptyValues: false });
  assert.deepEqual(formatOf(fileLog({ format: '' })), { kind: 'text', format: DEFAULT_FORMAT, omitEmptyValues: false });
  assert.deepEqual(formatOf(fileLog({ format: '%PROTOCOL%\n' })), { kind: 'text', format: '%PROTOCOL%\n', omitEmptyValues: false });
  assert.deepEqual(formatOf(fileLog({ json_format: { a: '%PROTOCOL%' } })), { kind: 'json', format: { a: '%PROTOCOL%' }, typed: false, omitEmptyValues: false });
  assert.deepEqual(formatOf(fileLog({ typed_json_format: { a: '%PROTOCOL%' } })), { kind: 'json', format: { a: '%PROTOCOL%' }, typed: true, omitEmptyValues: false });
  assert.deepEqual(formatOf(fileLog({ log_format: { text_format: 'x', omit_empty_values: true } })), { kind: 'text', format: 'x', omitEmptyValues: true });
  assert.deepEqual(formatOf(fileLog({ log_format: { json_format: { a: 'b' } } })), { kind: 'json', format: { a: 'b' }, typed: true, omitEmptyValues: false });
  assert.deepEqual(loggerModel(fileLog({})), { name: FILE_ACCESS_LOG, path: '/tmp/x.log', format: { kind: 'text', format: DEFAULT_FORMAT, omitEmptyValues: false } });
});

test('format errors carry the path of the format field', () => {
  const cases: [JsonObject, string, RegExp][] = [
    [{ format: '%BOGUS%' }, 'typed_config.format', /Not supported field in StreamInfo: BOGUS/],
    [{ json_format: { a: { b: '%BOGUS%' } } }, 'typed_config.json_format["a"]["b"]', /BOGUS/],
    [{ typed_json_format: { a: 1 } }, 'typed_config.typed_json_format["a"]', /Only string values/],
    [{ log_format: { text_format: '50%' } }, 'typed_config.log_format.text_format', /Couldn't find valid command/],
    [{ log_format: { json_format: { k: '%X%' } } }, 'typed_config.log_format.json_format["k"]', /Not supported/],
  ];
  for (const [typed, path, reason] of cases) {
    assert.throws(
      () => loggerModel(fileLog(typed)),
      (e: unknown) => e instanceof FieldError && e.fieldPath === path && reason.test(e.reason),
      `${JSON.stringify(typed)} -> ${path}`,
    );
  }
  assert.throws(
    () => loggerModel({ name: 'envoy.access_loggers.file' }),
    (e: unknown) => e instanceof FieldError && e.fieldPath === 'typed_config.path',
  );
});

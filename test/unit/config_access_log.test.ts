import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as yaml from 'js-yaml';
import { ConfigError, ConfigErrors } from '../../src/config/errors';
import { loadBootstrap } from '../../src/config/load';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';
import type { HttpConnectionManagerConfig, TcpProxyConfig } from '../../src/config/model';
import { DEFAULT_FORMAT } from '../../src/access_log/log_formatter';
import { Json, v3Bootstrap } from '../helpers/config_fixtures';

const FILE_TYPE = 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog';
const V2_FILE_TYPE = 'type.googleapis.com/envoy.config.accesslog.v2.FileAccessLog';
const TCP_PATH = 'static_resources.listeners[0].filter_chains[0].filters[0].typed_config';
const HCM_PATH = 'static_resources.listeners[1].filter_chains[0].filters[0].typed_config';

function load(bootstrap: Json) {
  return loadBootstrap({ configYaml: yaml.dump(bootstrap), allowUnknownStaticFields: false, extensions: builtinExtensions() });
}

/** v3Bootstrap() with `tcp` as the tcp_proxy's access_log and `http` as the connection manager's. */
function withAccessLogs(tcp: Json[], http: Json[] = []): Json {
  const bootstrap = v3Bootstrap();
  const [tcpListener, httpListener] = bootstrap.static_resources.listeners;
  tcpListener.filter_chains[0].filters[0].typed_config.access_log = tcp;
  httpListener.filter_chains[0].filters[0].typed_config.access_log = http;
  return bootstrap;
}

function filters(bootstrap: Json): [TcpProxyConfig, HttpConnectionManagerConfig] {
  const model = load(bootstrap).bootstrap;
  return [model.listeners[0].filterChains[0].filters[0] as TcpProxyConfig, model.listeners[1].filterChains[0].filters[0] as HttpConnectionManagerConfig];
}

/** Refused by loading (its last stage is the capability check). */
function refusedAt(bootstrap: Json, path: string, reason: RegExp): void {
  assert.throws(
    () => load(bootstrap),
    (e: unknown) => {
      const all = e instanceof ConfigErrors ? e.all : e instanceof ConfigError ? [e] : [];
      return all.some((error) => error.fieldPath === path && reason.test(error.reason));
    },
    path,
  );
}

test('tcp_proxy and the connection manager take access logs: v3 typed, by name or by type URL', () => {
  const [tcp, http] = filters(
    withAccessLogs(
      [{ name: 'envoy.access_loggers.file', typed_config: { '@type': FILE_TYPE, path: '/tmp/tcp.log' } }],
      [
        {
          name: 'my_log',
          filter: { status_code_filter: { comparison: { op: 'GE', value: { default_value: 500, runtime_key: 'log.status' } } } },
          typed_config: { '@type': FILE_TYPE, path: '/tmp/http.log', log_format: { json_format: { code: '%RESPONSE_CODE%' }, omit_empty_values: true } },
        },
      ],
    ),
  );
  assert.deepEqual(tcp.accessLogs, [{ filter: null, logger: { name: 'proxy.access_loggers.file', path: '/tmp/tcp.log', format: { kind: 'text', format: DEFAULT_FORMAT, omitEmptyValues: false } } }]);
  assert.deepEqual(http.accessLogs, [
    {
      filter: { kind: 'status_code', comparison: { op: 'GE', defaultValue: 500, runtimeKey: 'log.status' } },
      logger: { name: 'proxy.access_loggers.file', path: '/tmp/http.log', format: { kind: 'json', format: { code: '%RESPONSE_CODE%' }, typed: true, omitEmptyValues: true } },
    },
  ]);
  const [plain] = filters(v3Bootstrap());
  assert.deepEqual(plain.accessLogs, []);
});

test('v2 forms: a config Struct by the legacy name, and a v2 typed_config', () => {
  const [tcp, http] = filters(
    withAccessLogs(
      [{ name: 'envoy.file_access_log', config: { path: '/tmp/a.log', format: '%DURATION%\n' } }],
      [{ name: 'envoy.file_access_log', typed_config: { '@type': V2_FILE_TYPE, path: '/tmp/b.log', json_format: { d: '%DURATION%' } } }],
    ),
  );
  assert.deepEqual(tcp.accessLogs[0]!.logger, { name: 'proxy.access_loggers.file', path: '/tmp/a.log', format: { kind: 'text', format: '%DURATION%\n', omitEmptyValues: false } });
  assert.deepEqual(http.accessLogs[0]!.logger, { name: 'proxy.access_loggers.file', path: '/tmp/b.log', format: { kind: 'json', format: { d: '%DURATION%' }, typed: false, omitEmptyValues: false } });
});

test('errors carry the field path from the bootstrap', () => {
  refusedAt(
    withAccessLogs([{ name: 'envoy.access_loggers.file', typed_config: { '@type': FILE_TYPE, path: '/tmp/x', format: '%NOPE%' } }]),
    `${TCP_PATH}.access_log[0].typed_config.format`,
    /Not supported field in StreamInfo: NOPE/,
  );
  refusedAt(
    withAccessLogs([], [{ name: 'envoy.access_loggers.file', typed_config: { '@type': FILE_TYPE, path: '/tmp/x', json_format: { a: { b: '%X%' } } } }]),
    `${HCM_PATH}.access_log[0].typed_config.json_format["a"]["b"]`,
    /Not supported field in StreamInfo: X/,
  );
  refusedAt(
    withAccessLogs([{ name: 'envoy.access_loggers.file', filter: { metadata_filter: {} }, typed_config: { '@type': FILE_TYPE, path: '/tmp/x' } }]),
    `${TCP_PATH}.access_log[0].filter.metadata_filter`,
    /not implemented/,
  );
  refusedAt(
    withAccessLogs([{ name: 'envoy.access_loggers.file', typed_config: { '@type': FILE_TYPE, path: '/tmp/x', log_format: { text_format: 'x', content_type: 'text/plain' } } }]),
    `${TCP_PATH}.access_log[0].typed_config.log_format.content_type`,
    /local reply/,
  );
  refusedAt(
    withAccessLogs([{ name: 'envoy.access_loggers.file', typed_config: { '@type': FILE_TYPE, path: '/tmp/x', log_format: { text_format_source: { inline_string: 'x' } } } }]),
    `${TCP_PATH}.access_log[0].typed_config.log_format.text_format_source`,
    /not implemented/,
  );
  refusedAt(
    withAccessLogs([{ name: 'envoy.access_loggers.http_grpc' }]),
    `${TCP_PATH}.access_log[0].name`,
    /Didn't find a registered implementation for name: 'proxy.access_loggers.http_grpc'/,
  );
});

test('access_log passes on the connection manager and on tcp_proxy', () => {
  const entry = { name: 'envoy.access_loggers.file', typed_config: { '@type': FILE_TYPE, path: '/tmp/x' } };
  const [tcp, http] = filters(withAccessLogs([entry], [entry]));
  assert.equal(tcp.accessLogs.length, 1);
  assert.equal(http.accessLogs.length, 1);
});

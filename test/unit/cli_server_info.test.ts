import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseCommandLine } from '../../src/cli/command_line';
import type { Options } from '../../src/cli/options';
import { protoDuration, renderServerInfoJson, ServerInfoSnapshot } from '../../src/admin/server_info_json';
import type { BuildInfo } from '../../src/server/build_info';
import { TEST_HOST } from '../helpers/cli_option_cases';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const BUILD: BuildInfo = { revision: 'abc123', release: false, version: '1.16.2', treeStatus: 'Clean', buildMode: 'RELEASE' };

function options(argv: string[]): Options {
  const parsed = parseCommandLine(argv, TEST_HOST);
  assert.equal(parsed.kind, 'run');
  return (parsed as Extract<typeof parsed, { kind: 'run' }>).options;
}

function snapshot(argv: string[], node = { id: 'n', cluster: 'c', locality: { region: '', zone: '', subZone: '' } }): ServerInfoSnapshot {
  return {
    build: BUILD,
    state: 'LIVE',
    uptimeCurrentEpochS: 6,
    uptimeAllEpochsS: 42,
    hotRestartVersion: '1.65536.128.256',
    options: options(argv),
    node,
    localAddress: '10.0.0.5',
    extensions: builtinExtensions(),
  };
}

// Envoy 1.16's envoy.admin.v3.CommandLineOptions, in declaration order.
const COMMAND_LINE_OPTION_KEYS = [
  'base_id', 'use_dynamic_base_id', 'base_id_path', 'concurrency', 'config_path', 'config_yaml',
  'allow_unknown_static_fields', 'reject_unknown_dynamic_fields', 'ignore_unknown_dynamic_fields',
  'admin_address_path', 'local_address_ip_version', 'log_level', 'component_log_level', 'log_format',
  'log_format_escaped', 'log_path', 'service_cluster', 'service_node', 'service_zone',
  'file_flush_interval', 'drain_time', 'drain_strategy', 'parent_shutdown_time', 'mode',
  'disable_hot_restart', 'enable_mutex_tracing', 'restart_epoch', 'cpuset_threads',
  'disabled_extensions', 'bootstrap_version', 'enable_fine_grain_logging', 'socket_path', 'socket_mode',
];

test('server info: Envoy\'s fields in order, pretty printed with a 1-space indent', () => {
  const text = renderServerInfoJson(snapshot([]));
  assert.ok(text.endsWith('}\n'));
  assert.ok(text.startsWith('{\n "version": "abc123/1.16.2-dev/Clean/RELEASE/OpenSSL",\n "state": "LIVE",\n'));
  const info = JSON.parse(text);
  assert.deepEqual(Object.keys(info), [
    'version', 'state', 'uptime_current_epoch', 'uptime_all_epochs', 'hot_restart_version',
    'command_line_options', 'node', 'local_address',
  ]);
  assert.equal(info.uptime_current_epoch, '6s');
  assert.equal(info.uptime_all_epochs, '42s');
  assert.equal(info.hot_restart_version, '1.65536.128.256');
  assert.equal(info.local_address, '10.0.0.5');
  assert.deepEqual(Object.keys(info.command_line_options), COMMAND_LINE_OPTION_KEYS);
});

test('command line options: defaults as Envoy prints them', () => {
  const cli = JSON.parse(renderServerInfoJson(snapshot([]))).command_line_options;
  assert.deepEqual(cli, {
    base_id: '0', use_dynamic_base_id: false, base_id_path: '', concurrency: 4, config_path: '', config_yaml: '',
    allow_unknown_static_fields: false, reject_unknown_dynamic_fields: false, ignore_unknown_dynamic_fields: false,
    admin_address_path: '', local_address_ip_version: 'v4', log_level: 'info', component_log_level: '',
    log_format: '[%Y-%m-%d %T.%e][%t][%l][%n] [%g:%#] %v', log_format_escaped: false, log_path: '',
    service_cluster: '', service_node: '', service_zone: '', file_flush_interval: '10s', drain_time: '600s',
    drain_strategy: 'Gradual', parent_shutdown_time: '900s', mode: 'Serve', disable_hot_restart: false,
    enable_mutex_tracing: false, restart_epoch: 0, cpuset_threads: false, disabled_extensions: [],
    bootstrap_version: 0, enable_fine_grain_logging: false, socket_path: '@proxy_domain_socket', socket_mode: 0,
  });
});

test('command line options: set values, enums by name, durations, the octal mode in decimal', () => {
  const cli = JSON.parse(
    renderServerInfoJson(
      snapshot([
        '--base-id', '9', '--concurrency', '2', '-l', 'warn', '--component-log-level', 'http:debug',
        '--file-flush-interval-msec', '1500', '--drain-time-s', '30', '--drain-strategy', 'immediate',
        '--parent-shutdown-time-s', '60', '--mode', 'init_only', '--local-address-ip-version', 'v6',
        '--socket-path', '/tmp/hr.sock', '--socket-mode', '644', '--bootstrap-version', '3',
        '--disable-extensions', 'a/b,c/d', '--allow-unknown-fields',
      ]),
    ),
  ).command_line_options;
  assert.equal(cli.base_id, '9');
  assert.equal(cli.concurrency, 2);
  assert.equal(cli.log_level, 'warning');
  assert.equal(cli.component_log_level, 'http:debug');
  assert.equal(cli.file_flush_interval, '1.500s');
  assert.equal(cli.drain_time, '30s');
  assert.equal(cli.drain_strategy, 'Immediate');
  assert.equal(cli.parent_shutdown_time, '60s');
  assert.equal(cli.mode, 'InitOnly');
  assert.equal(cli.local_address_ip_version, 'v6');
  assert.equal(cli.socket_path, '/tmp/hr.sock');
  assert.equal(cli.socket_mode, 420);
  assert.equal(cli.bootstrap_version, 3);
  assert.deepEqual(cli.disabled_extensions, ['a/b', 'c/d']);
  assert.equal(cli.allow_unknown_static_fields, true);
});

test('node: identity, build version, extensions with their disabled flag', () => {
  const info = JSON.parse(renderServerInfoJson(snapshot(['--disable-extensions', 'envoy.filters.network/envoy.filters.network.tcp_proxy'])));
  const { node } = info;
  assert.deepEqual(Object.keys(node), [
    'id', 'cluster', 'user_agent_name', 'user_agent_build_version', 'extensions',
    'hidden_proxy_deprecated_build_version', 'client_features', 'listening_addresses',
  ]);
  assert.equal(node.user_agent_name, 'proxy');
  assert.deepEqual(node.user_agent_build_version, {
    version: { major_number: 1, minor_number: 16, patch: 2 },
    metadata: { 'build.type': 'RELEASE', 'ssl.version': 'OpenSSL', 'revision.sha': 'abc123', 'revision.status': 'Clean' },
  });
  const disabled = node.extensions.filter((e: { disabled: boolean }) => e.disabled).map((e: { name: string }) => e.name);
  assert.deepEqual(disabled, ['proxy.filters.network.tcp_proxy']);
  // A locality is printed once it has a field set (e.g. by --service-zone).
  const zoned = JSON.parse(renderServerInfoJson(snapshot([], { id: 'n', cluster: 'c', locality: { region: '', zone: 'z', subZone: '' } })));
  assert.deepEqual(zoned.node.locality, { region: '', zone: 'z', sub_zone: '' });
});

test('durations print as proto JSON does', () => {
  assert.equal(protoDuration(0), '0s');
  assert.equal(protoDuration(10_000), '10s');
  assert.equal(protoDuration(1_500), '1.500s');
  assert.equal(protoDuration(1), '0.001s');
  assert.equal(protoDuration(0.0015), '0.000001500s');
  assert.equal(protoDuration(2.5e-3), '0.000002500s');
});

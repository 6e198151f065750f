// The options' effects on a serving proxy: defaults, then every option set at once, then the
// options that need a process of their own (fine-grain logging, cpuset threads, init_only),
// and the same bootstrap in every file format.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import * as yaml from 'js-yaml';
import { servableV2, servableV3, writeEveryFormat } from '../helpers/cli_bootstraps';
import { mapLimited, runToExit, Serving, startServing, stopServing } from '../helpers/cli_runs';
import { makeTempDir, waitFor } from '../helpers/proxy_process';

/** One line of the default format `[%Y-%m-%d %T.%e][%t][%l][%n] [%g:%#] %v`. */
const DEFAULT_FORMAT_LINE =
  /^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}\]\[\d+\]\[(trace|debug|info|warning|error|critical)\]\[[a-z_0-9]+\] \[src\/[\w/]+\.ts:\d+\] .+$/;

async function withServing(args: string[], setup: (dir: string) => void, body: (proxy: Serving, dir: string) => Promise<void>, wrapper?: string[]): Promise<void> {
  const dir = makeTempDir();
  setup(dir);
  const proxy = await startServing(args.map((arg) => arg.replaceAll('$DIR', dir)), { dir, wrapper });
  try {
    await body(proxy, dir);
  } finally {
    await stopServing(proxy);
  }
}

const writeConfig = (dir: string, config: unknown, name = 'bootstrap.json') => fs.writeFileSync(path.join(dir, name), JSON.stringify(config));

function serverInfo(proxy: Serving): Promise<any> {
  return proxy.get('/server_info?format=json').then((text) => JSON.parse(text));
}

test('defaults: Envoy\'s values in /server_info, the default log format, one worker per hardware thread', { timeout: 30000 }, async () => {
  await withServing(
    ['-c', '$DIR/bootstrap.json', '--disable-hot-restart'],
    (dir) => writeConfig(dir, servableV3(path.join(dir, 'admin_access.log'))),
    async (proxy, dir) => {
      const info = await serverInfo(proxy);
      assert.deepEqual(info.command_line_options, {
        base_id: '0', use_dynamic_base_id: false, base_id_path: '', concurrency: os.cpus().length,
        config_path: path.join(dir, 'bootstrap.json'), config_yaml: '',
        allow_unknown_static_fields: false, reject_unknown_dynamic_fields: false, ignore_unknown_dynamic_fields: false,
        admin_address_path: path.join(dir, 'admin_address'), local_address_ip_version: 'v4', log_level: 'info',
        component_log_level: '', log_format: '[%Y-%m-%d %T.%e][%t][%l][%n] [%g:%#] %v', log_format_escaped: false,
        log_path: '', service_cluster: '', service_node: '', service_zone: '', file_flush_interval: '10s',
        drain_time: '600s', drain_strategy: 'Gradual', parent_shutdown_time: '900s', mode: 'Serve',
        disable_hot_restart: true, enable_mutex_tracing: false, restart_epoch: 0, cpuset_threads: false,
        disabled_extensions: [], bootstrap_version: 0, enable_fine_grain_logging: false,
        socket_path: '@proxy_domain_socket', socket_mode: 0,
      });
      assert.equal(info.state, 'LIVE');
      assert.equal(info.hot_restart_version, 'disabled');
      assert.deepEqual([info.node.id, info.node.cluster, info.node.locality], ['node-1', 'edge', { region: '', zone: 'eu-1a', sub_zone: '' }]);
      assert.ok(net.isIPv4(info.local_address), info.local_address);
      assert.equal(info.node.extensions.filter((e: { disabled: boolean }) => e.disabled).length, 0);
      assert.match(await proxy.get('/server_info'), /^proxy [0-9a-f]{40}\/(RELEASE|DEBUG) live \d+ \d+ 0\n$/);
      assert.equal(await proxy.stat('server.concurrency'), os.cpus().length);
      assert.equal(await proxy.stat('server.static_unknown_fields'), 0);
      assert.equal(proxy.groupPids().length, 1 + os.cpus().length);
      assert.equal(await proxy.get('/contention'), 'Mutex contention tracing is not enabled. To enable, run Proxy with flag --enable-mutex-tracing.');

      // The log goes to stderr, every line in the default format.
      const lines = proxy.stderr.trimEnd().split('\n');
      assert.ok(lines.some((line) => line.includes('[info][main] [src/server/supervisor.ts:')), proxy.stderr);
      for (const line of lines) assert.match(line, DEFAULT_FORMAT_LINE);
    },
  );
});

test('every option set: node overrides, logging, access log flushing and reopening, and the rest in /server_info', { timeout: 40000 }, async () => {
  const args = [
    '-c', '$DIR/bootstrap.json', '--bootstrap-version', '3', '--allow-unknown-static-fields', '--disable-hot-restart',
    '--concurrency', '2', '--service-cluster', 'svc', '--service-node', 'node-7', '--service-zone', 'zone-b',
    '--log-path', '$DIR/proxy.log', '--log-format', '[%l][%n] %v', '--log-format-escaped',
    '--log-format-prefix-with-location', '1', '-l', 'debug', '--component-log-level', 'main:warning',
    '--file-flush-interval-msec', '50', '--enable-mutex-tracing', '--drain-time-s', '30', '--drain-strategy', 'immediate',
    '--parent-shutdown-time-s', '60', '--socket-path', '$DIR/hot_restart.sock', '--socket-mode', '640', '--base-id', '77',
    '--base-id-path', '$DIR/base_id', '--restart-epoch', '2', '--local-address-ip-version', 'v6',
    '--disable-extensions', 'proxy.filters.network/proxy.filters.network.tcp_proxy',
    '--reject-unknown-dynamic-fields', '--ignore-unknown-dynamic-fields',
  ];
  await withServing(
    args,
    (dir) => {
      const config = servableV3(path.join(dir, 'admin_access.log'));
      // The TCP listener goes: its filter is disabled. Two unknown fields stay, one with a line break.
      config.static_resources.listeners.shift();
      config.node.colour = 'blue';
      config['bad\nkey'] = true;
      writeConfig(dir, config);
    },
    async (proxy, dir) => {
      const info = await serverInfo(proxy);
      const cli = info.command_line_options;
      assert.deepEqual(
        [cli.bootstrap_version, cli.allow_unknown_static_fields, cli.concurrency, cli.log_level, cli.component_log_level],
        [3, true, 2, 'debug', 'main:warning'],
      );
      assert.deepEqual(
        [cli.log_path, cli.log_format, cli.log_format_escaped, cli.file_flush_interval, cli.enable_mutex_tracing],
        [path.join(dir, 'proxy.log'), '[%l][%n] %v', true, '0.050s', true],
      );
      assert.deepEqual(
        [cli.drain_time, cli.drain_strategy, cli.parent_shutdown_time, cli.socket_path, cli.socket_mode],
        ['30s', 'Immediate', '60s', path.join(dir, 'hot_restart.sock'), 0o640],
      );
      assert.deepEqual(
        [cli.base_id, cli.base_id_path, cli.restart_epoch, cli.local_address_ip_version, cli.disabled_extensions],
        ['77', path.join(dir, 'base_id'), 2, 'v6', ['proxy.filters.network/proxy.filters.network.tcp_proxy']],
      );
      assert.deepEqual([cli.reject_unknown_dynamic_fields, cli.ignore_unknown_dynamic_fields], [true, true]);
      assert.deepEqual(
        [cli.service_cluster, cli.service_node, cli.service_zone, info.node.id, info.node.cluster, info.node.locality],
        ['svc', 'node-7', 'zone-b', 'node-7', 'svc', { region: '', zone: 'zone-b', sub_zone: '' }],
      );
      const disabled = info.node.extensions.filter((e: { disabled: boolean }) => e.disabled).map((e: { name: string }) => e.name);
      assert.deepEqual(disabled, ['proxy.filters.network.tcp_proxy']);
      assert.ok(net.isIPv6(info.local_address), info.local_address);

      // --restart-epoch, --concurrency, --allow-unknown-static-fields and --enable-mutex-tracing at work.
      assert.match(await proxy.get('/server_info'), / 2\n$/);
      assert.equal(await proxy.stat('server.hot_restart_epoch'), 2);
      assert.equal(await proxy.stat('server.concurrency'), 2);
      assert.equal(proxy.groupPids().length, 3);
      assert.equal(await proxy.stat('server.static_unknown_fields'), 2);
      assert.deepEqual(Object.keys(JSON.parse(await proxy.get('/contention'))), ['num_contentions', 'current_wait_cycles', 'lifetime_wait_cycles']);

      // The log: in the file, not on stderr; the format with the location prefix; escaped;
      // main at warning although -l is debug.
      const logFile = path.join(dir, 'proxy.log');
      const unknown = await waitFor('the unknown field warnings', () => {
        const lines = fs.readFileSync(logFile, 'utf8').split('\n');
        return lines.some((line) => line.includes('Unknown field: bad')) ? lines : undefined;
      });
      assert.equal(proxy.stderr, '');
      assert.ok(unknown.some((line) => /^\[warning\]\[main\] \[src\/cli\/run\.ts:\d+\] Unknown field: node\.colour$/.test(line)), unknown.join('\n'));
      assert.ok(unknown.some((line) => /^\[warning\]\[main\] \[src\/cli\/run\.ts:\d+\] Unknown field: bad\\nkey$/.test(line)), unknown.join('\n'));
      assert.ok(!unknown.some((line) => line.startsWith('[info][main]') || line.startsWith('[debug][main]')), unknown.join('\n'));

      // The admin access log is flushed at the interval.
      const accessLog = path.join(dir, 'admin_access.log');
      await proxy.get('/ready?before-rotation');
      await waitFor('the access log line', () => (fs.readFileSync(accessLog, 'utf8').includes('/ready?before-rotation') ? true : undefined));

      // SIGUSR1 reopens the log and the access log after rotation.
      fs.renameSync(logFile, `${logFile}.1`);
      fs.renameSync(accessLog, `${accessLog}.1`);
      process.kill(proxy.pid, 'SIGUSR1');
      const either = () => [logFile, `${logFile}.1`].map((f) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '')).join('');
      await waitFor('the SIGUSR1 line', () => (either().includes('caught SIGUSR1. Reopening access logs.') ? true : undefined));
      process.kill(proxy.pid, 'SIGHUP');
      await waitFor('a line in the reopened log', () =>
        fs.existsSync(logFile) && fs.readFileSync(logFile, 'utf8').includes('caught and eating SIGHUP') ? true : undefined,
      );
      await proxy.get('/ready?after-rotation');
      await waitFor('an access log line in the reopened file', () =>
        fs.existsSync(accessLog) && fs.readFileSync(accessLog, 'utf8').includes('/ready?after-rotation') ? true : undefined,
      );
      assert.ok(!fs.readFileSync(`${accessLog}.1`, 'utf8').includes('after-rotation'));
      // Workers reopened theirs too: each now holds the new file and not the rotated one.
      const openFiles = (pid: number) => fs.readdirSync(`/proc/${pid}/fd`).map((fd) => {
        try {
          return fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
        } catch {
          return '';
        }
      });
      for (const worker of proxy.groupPids().filter((p) => p !== proxy.pid)) {
        await waitFor(`worker ${worker} to reopen its log`, () => {
          const files = openFiles(worker);
          return files.includes(logFile) && !files.includes(`${logFile}.1`) ? true : undefined;
        });
      }
    },
  );
});

test('fine-grain logging names loggers by file; --cpuset-threads counts the CPUs; --config-yaml merges', { timeout: 30000 }, async () => {
  await withServing(
    [
      '-c', '$DIR/bootstrap.json', '--config-yaml', '{node: {id: from-yaml}}', '--disable-hot-restart', '--cpuset-threads',
      '--enable-fine-grain-logging', '--use-dynamic-base-id', '--log-format', '%n|%v',
    ],
    (dir) => writeConfig(dir, servableV3(path.join(dir, 'admin_access.log'))),
    async (proxy) => {
      const info = await serverInfo(proxy);
      assert.deepEqual(
        [info.command_line_options.cpuset_threads, info.command_line_options.enable_fine_grain_logging, info.command_line_options.use_dynamic_base_id],
        [true, true, true],
      );
      // taskset gave the proxy one CPU.
      assert.equal(info.command_line_options.concurrency, 1);
      assert.equal(await proxy.stat('server.concurrency'), 1);
      assert.ok(proxy.stderr.includes('src/server/supervisor.ts|initializing epoch 0'), proxy.stderr);
      // The YAML replaced the node id and kept the file's other node fields.
      assert.deepEqual([info.node.id, info.node.cluster], ['from-yaml', 'edge']);
    },
    ['taskset', '-c', '0'],
  );
});

test('--mode init_only starts everything, then shuts down cleanly with exit 0', { timeout: 30000 }, async () => {
  const dir = makeTempDir();
  try {
    writeConfig(dir, servableV3(path.join(dir, 'admin_access.log')));
    const addressPath = path.join(dir, 'admin_address');
    const { code, stderr } = await runToExit(['-c', path.join(dir, 'bootstrap.json'), '--mode', 'init_only', '--disable-hot-restart', '--concurrency', '1', '--admin-address-path', addressPath]);
    assert.equal(code, 0, stderr);
    assert.ok(fs.existsSync(addressPath));
    assert.ok(stderr.includes('all 1 workers started; serving'), stderr);
    assert.ok(stderr.includes('shutting down: --mode init_only: initialized'), stderr);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('one bootstrap as .yaml, .json, .pb, .pb_text and as v2 YAML: the same /config_dump', { timeout: 40000 }, async () => {
  const dir = makeTempDir();
  try {
    const bootstrap = servableV3('/dev/null');
    const files = writeEveryFormat(dir, bootstrap);
    const v2File = path.join(dir, 'bootstrap_v2.yaml');
    fs.writeFileSync(v2File, yaml.dump(servableV2('/dev/null')));
    const deprecations: string[] = [];
    const dumps = await mapLimited([...files, v2File], 2, async (file) => {
      const proxy = await startServing(['-c', file, '--disable-hot-restart', '--concurrency', '1'], { dir: makeTempDir() });
      try {
        // The load time differs from process to process.
        const dump = (await proxy.get('/config_dump')).replace(/"last_updated": "[^"]+"/g, '"last_updated": "-"');
        if (file === v2File) deprecations.push(...proxy.stderr.split('\n').filter((line) => line.includes('deprecated')));
        return dump;
      } finally {
        await stopServing(proxy);
      }
    });
    // The v2 file loads with a warning for each deprecated field.
    assert.deepEqual(
      deprecations.map((line) => line.replace(/^.*\] /, '')),
      [
        'static_resources.clusters[0].hosts: deprecated option, use load_assignment instead',
        'static_resources.clusters[1].hosts: deprecated option, use load_assignment instead',
      ],
    );
    assert.deepEqual(JSON.parse(dumps[0]!).configs.length, 6);
    for (const [i, other] of dumps.entries()) assert.equal(other, dumps[0], [...files, v2File][i]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

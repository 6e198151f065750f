// The extension registry as the configuration pipeline asks it: Envoy's lookup (name, legacy
// name, typed_config type), the categories /server_info leaves out, and the places of a
// bootstrap where extensions are found.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachExtension, type ExtensionSite } from '../../src/config/extension_sites';
import type { JsonObject } from '../../src/config/json';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const TCP_PROXY_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';

test('an extension is found by its name, its envoy. spelling, a legacy name, else the type of its typed_config', { timeout: 5000 }, () => {
  const extensions = builtinExtensions();
  for (const name of ['proxy.filters.network.tcp_proxy', 'envoy.filters.network.tcp_proxy', 'envoy.tcp_proxy']) {
    assert.equal(extensions.find('proxy.filters.network', { name })?.name, 'proxy.filters.network.tcp_proxy', name);
  }
  assert.equal(extensions.find('proxy.filters.network', { name: 'tcp', typed_config: { '@type': TCP_PROXY_TYPE } })?.name, 'proxy.filters.network.tcp_proxy');
  // In its own category only.
  assert.equal(extensions.find('proxy.filters.http', { name: 'tcp', typed_config: { '@type': TCP_PROXY_TYPE } }), undefined);
  assert.equal(extensions.registeredName('proxy.filters.http', { name: 'envoy.filters.http.cors' }), 'proxy.filters.http.cors');
});

test('load balancing policies and health checkers are descriptors, but not extensions /server_info lists or --disable-extensions names', { timeout: 5000 }, () => {
  const extensions = builtinExtensions();
  assert.deepEqual(
    extensions.of('proxy.load_balancers').map((lb) => lb.name),
    ['ROUND_ROBIN', 'LEAST_REQUEST', 'RANDOM', 'RING_HASH', 'MAGLEV'],
  );
  assert.deepEqual(
    extensions.of('proxy.health_checkers').map((checker) => checker.name),
    ['http_health_check', 'tcp_health_check', 'grpc_health_check'],
  );
  const listed = new Set(extensions.listed().map((e) => e.category));
  assert.ok(!listed.has('proxy.load_balancers') && !listed.has('proxy.health_checkers'));
  assert.deepEqual(extensions.resolveDisabled(['proxy.load_balancers/ROUND_ROBIN']).notes, [
    { level: 'warning', text: "failed to disable unknown extension 'proxy.load_balancers/ROUND_ROBIN'" },
  ]);
});

test('access loggers are found at access_log of the connection manager and the TCP proxy', { timeout: 5000 }, () => {
  const logger = { name: 'envoy.access_loggers.file' };
  const chain = (filter: JsonObject): JsonObject => ({ filters: [filter] });
  const bootstrap: JsonObject = {
    static_resources: {
      listeners: [
        {
          filter_chains: [
            chain({ name: 'envoy.http_connection_manager', typed_config: { http_filters: [{ name: 'envoy.router' }], access_log: [logger] } }),
            chain({ name: 'envoy.tcp_proxy', typed_config: { access_log: [logger, logger] } }),
          ],
        },
      ],
    },
  };
  const visited: string[] = [];
  forEachExtension(bootstrap, builtinExtensions(), (_extension, site: ExtensionSite, path) => {
    if (site === 'access_log') visited.push(path);
  });
  const listener = 'static_resources.listeners[0]';
  assert.deepEqual(visited, [
    `${listener}.filter_chains[0].filters[0].typed_config.access_log[0]`,
    `${listener}.filter_chains[1].filters[0].typed_config.access_log[0]`,
    `${listener}.filter_chains[1].filters[0].typed_config.access_log[1]`,
  ]);
});

test('stats sinks are found at the bootstrap\'s stats_sinks, and listed as Envoy lists them', { timeout: 5000 }, () => {
  const extensions = builtinExtensions();
  const bootstrap: JsonObject = { stats_sinks: [{ name: 'envoy.statsd' }, { name: 'envoy.stat_sinks.metrics_service' }] };
  const visited: string[] = [];
  forEachExtension(bootstrap, extensions, (extension, site: ExtensionSite, path) => {
    if (site === 'stats_sink') visited.push(`${path} ${extensions.registeredName('proxy.stats_sinks', extension)}`);
  });
  assert.deepEqual(visited, ['stats_sinks[0] proxy.stat_sinks.statsd', 'stats_sinks[1] proxy.stat_sinks.metrics_service']);
  assert.deepEqual(
    extensions.listed().filter((e) => e.category === 'proxy.stats_sinks'),
    [
      { name: 'proxy.stat_sinks.dog_statsd', category: 'proxy.stats_sinks', typeDescriptor: 'envoy.config.metrics.v3.DogStatsdSink' },
      { name: 'proxy.stat_sinks.metrics_service', category: 'proxy.stats_sinks', typeDescriptor: 'envoy.config.metrics.v3.MetricsServiceConfig' },
      { name: 'proxy.stat_sinks.statsd', category: 'proxy.stats_sinks', typeDescriptor: 'envoy.config.metrics.v3.StatsdSink' },
    ],
  );
});

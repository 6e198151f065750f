import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/errors';
import { loadBootstrap, LoadOptions } from '../../src/config/load';
import { applyServiceOverrides } from '../../src/config/node_overrides';
import { v2Bootstrap, v3Bootstrap } from '../helpers/config_fixtures';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const v2 = JSON.stringify(v2Bootstrap());
const v3 = JSON.stringify(v3Bootstrap());
const STRICT = { extensions: builtinExtensions(), allowUnknownStaticFields: false };

function loadError(options: LoadOptions): string {
  try {
    loadBootstrap(options);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  assert.fail('the configuration loaded');
}

test('--bootstrap-version: unset tries v2 then v3; 2 upgrades; 3 takes v3 as written', { timeout: 20000 }, () => {
  const expected = loadBootstrap({ configYaml: v3, ...STRICT }).bootstrap;
  for (const bootstrapVersion of [undefined, null, 2]) {
    assert.deepEqual(loadBootstrap({ configYaml: v2, bootstrapVersion, ...STRICT }).bootstrap, expected, String(bootstrapVersion));
  }
  assert.deepEqual(loadBootstrap({ configYaml: v3, bootstrapVersion: 3, ...STRICT }).bootstrap, expected);
  // A v2 construct is an unknown field of the v3 API.
  assert.match(loadError({ configYaml: v2, bootstrapVersion: 3, ...STRICT }), /^--config-yaml: static_resources\.listeners\[0\]\.filter_chains\[0\]\.filters\[0\]\.config: unknown field$/);
  assert.equal(loadError({ configYaml: v3, bootstrapVersion: 4, ...STRICT }), '--config-yaml: Unknown bootstrap version 4.');
});

test('--disable-extensions entries resolve against the registry, in either spelling', () => {
  const resolved = builtinExtensions().resolveDisabled([
    'proxy.filters.network/proxy.filters.network.tcp_proxy',
    'envoy.filters.http/envoy.filters.http.router',
    'envoy.filters.network/envoy.filters.network.nope',
    'no-slash',
  ]);
  assert.deepEqual([...resolved.keys], [
    'proxy.filters.network/proxy.filters.network.tcp_proxy',
    'proxy.filters.http/proxy.filters.http.router',
  ]);
  assert.deepEqual(resolved.notes, [
    { level: 'info', text: "disabled extension 'proxy.filters.network/proxy.filters.network.tcp_proxy'" },
    { level: 'info', text: "disabled extension 'envoy.filters.http/envoy.filters.http.router'" },
    { level: 'warning', text: "failed to disable unknown extension 'envoy.filters.network/envoy.filters.network.nope'" },
    { level: 'warning', text: "failed to disable invalid extension name 'no-slash'" },
  ]);
});

test('a configuration using a disabled extension fails, naming it and why', { timeout: 20000 }, () => {
  const cases: Array<[string, string]> = [
    [
      'proxy.filters.network/proxy.filters.network.tcp_proxy',
      "--config-yaml: static_resources.listeners[0].filter_chains[0].filters[0].name: Didn't find a registered implementation for name: 'proxy.filters.network.tcp_proxy' (disabled by --disable-extensions)",
    ],
    [
      'envoy.filters.http/envoy.filters.http.router',
      "--config-yaml: static_resources.listeners[1].filter_chains[0].filters[0].typed_config.http_filters[0].name: Didn't find a registered implementation for name: 'proxy.filters.http.router' (disabled by --disable-extensions)",
    ],
    [
      'proxy.clusters/proxy.cluster.static',
      "--config-yaml: static_resources.clusters[0].type: Didn't find a registered cluster factory implementation for name: 'proxy.cluster.static' (disabled by --disable-extensions)",
    ],
  ];
  for (const [entry, message] of cases) {
    const disabledExtensions = builtinExtensions().resolveDisabled([entry]).keys;
    assert.equal(loadError({ configYaml: v3, disabledExtensions, ...STRICT }), message);
  }
  // Disabling what the configuration does not use changes nothing.
  const unused = builtinExtensions().resolveDisabled(['proxy.filters.network/proxy.filters.network.tcp_proxy']).keys;
  const httpOnly = v3Bootstrap();
  httpOnly.static_resources.listeners.shift();
  assert.equal(loadBootstrap({ configYaml: JSON.stringify(httpOnly), disabledExtensions: unused, ...STRICT }).bootstrap.listeners.length, 1);
});

test('every registered extension can be disabled by its category and name', () => {
  for (const e of builtinExtensions().listed()) {
    assert.deepEqual([...builtinExtensions().resolveDisabled([`${e.category}/${e.name}`]).keys], [`${e.category}/${e.name}`]);
  }
});

test('--service-cluster/--service-node/--service-zone replace the node fields they name', () => {
  const bootstrap = loadBootstrap({ configYaml: v3, ...STRICT }).bootstrap;
  const none = applyServiceOverrides(bootstrap, { serviceCluster: '', serviceNode: '', serviceZone: '' });
  assert.deepEqual(none.node, bootstrap.node);
  const all = applyServiceOverrides(bootstrap, { serviceCluster: 'c', serviceNode: 'n', serviceZone: 'z' });
  assert.deepEqual(all.node, { id: 'n', cluster: 'c', locality: { region: 'eu', zone: 'z', subZone: 'rack-7' } });
  // The source stays as written, for /config_dump, and the rest of the model is shared.
  assert.equal(all.source, bootstrap.source);
  assert.equal(all.clusters, bootstrap.clusters);
});

test('the aggregate cluster is a registered cluster extension, with its config type, and --disable-extensions disables it', () => {
  const aggregate = builtinExtensions().listed().find((e) => e.name === 'proxy.clusters.aggregate');
  assert.deepEqual(aggregate, { category: 'proxy.clusters', name: 'proxy.clusters.aggregate', typeDescriptor: 'envoy.extensions.clusters.aggregate.v3.ClusterConfig' });
  const bootstrap = v3Bootstrap();
  bootstrap.static_resources.clusters.push({
    name: 'agg',
    connect_timeout: '1s',
    lb_policy: 'CLUSTER_PROVIDED',
    cluster_type: { name: 'envoy.clusters.aggregate', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.clusters.aggregate.v3.ClusterConfig', clusters: ['x'] } },
  });
  const configYaml = JSON.stringify(bootstrap);
  const index = bootstrap.static_resources.clusters.length - 1;
  assert.equal(loadBootstrap({ configYaml, ...STRICT }).bootstrap.clusters[index]!.clusterType?.name, 'proxy.clusters.aggregate');
  const disabledExtensions = builtinExtensions().resolveDisabled(['envoy.clusters/envoy.clusters.aggregate']).keys;
  assert.equal(
    loadError({ configYaml, disabledExtensions, ...STRICT }),
    `--config-yaml: static_resources.clusters[${index}].cluster_type.name: Didn't find a registered cluster factory implementation for name: 'proxy.clusters.aggregate' (disabled by --disable-extensions)`,
  );
});

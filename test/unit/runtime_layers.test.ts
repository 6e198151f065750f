import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import * as yaml from 'js-yaml';
import { renderRuntimeJson } from '../../src/admin/runtime_handler';
import { ConfigError, FieldError } from '../../src/config/errors';
import { loadBootstrap } from '../../src/config/load';
import type { RuntimeLayerConfig } from '../../src/config/model';
import { mergeAdminValues } from '../../src/runtime/admin_layer';
import { diskFileValue, readDiskLayer, readDiskLayerIfPresent } from '../../src/runtime/disk_layer';
import { finalValues, loadLayers } from '../../src/runtime/layered_runtime';
import { Runtime } from '../../src/runtime/runtime';
import { flattenStaticLayer } from '../../src/runtime/static_layer';
import { Json, localCluster, withTempDir } from '../helpers/config_fixtures';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

test('a static layer flattens nested objects with `.`, keeps percents whole, refuses lists by path', () => {
  const values = flattenStaticLayer(
    { a: { b: { c: 'x' }, n: 5, f: 0.25, t: true }, pct: { numerator: 20, denominator: 'TEN_THOUSAND' }, empty: {} },
    'layered_runtime.layers[0].static_layer',
  );
  assert.deepEqual(new Map(values), new Map([
    ['a.b.c', 'x'],
    ['a.n', '5'],
    ['a.f', '0.25'],
    ['a.t', 'true'],
    ['pct', 'denominator: TEN_THOUSAND\nnumerator: 20'],
    ['empty', '{}'],
  ]));
  assert.throws(
    () => flattenStaticLayer({ a: { l: [1] } }, 'layered_runtime.layers[0].static_layer'),
    (e: unknown) => e instanceof FieldError && e.fieldPath === 'layered_runtime.layers[0].static_layer.a.l' && /Invalid runtime entry value for a\.l/.test(e.reason),
  );
});

test('a disk file value: comment lines and empty lines go, the last line is right-trimmed', () => {
  assert.equal(diskFileValue('42\n'), '42');
  assert.equal(diskFileValue('  v \t\n\n'), '  v');
  assert.equal(diskFileValue('# placeholder\n'), '');
  assert.equal(diskFileValue('a\n#c\nb  \n'), 'a\nb');
  assert.equal(diskFileValue('5\n# trailing comment\n'), '5\n');
});

test('a disk layer: file paths become dotted keys; a missing directory is no layer; too deep fails', () => {
  withTempDir((dir) => {
    fs.mkdirSync(path.join(dir, 'root', 'health_check'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'root', 'health_check', 'min_interval'), '10\n');
    fs.writeFileSync(path.join(dir, 'root', 'top'), 'yes');
    assert.deepEqual(readDiskLayer(path.join(dir, 'root')), [['health_check.min_interval', '10'], ['top', 'yes']]);
    assert.equal(readDiskLayerIfPresent(path.join(dir, 'absent')), null);
    const deep = path.join(dir, 'deep', ...Array.from({ length: 16 }, (_, i) => `d${i}`));
    fs.mkdirSync(deep, { recursive: true });
    fs.writeFileSync(path.join(deep, 'k'), 'v');
    assert.throws(() => readDiskLayer(path.join(dir, 'deep')), /Walk recursion depth exceeded 16/);
  });
});

test('layering: later layers override, a missing disk layer is left out, a broken one is an error', () => {
  withTempDir((dir) => {
    fs.mkdirSync(path.join(dir, 'current', 'proxy', 'edge'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'current', 'proxy', 'k'), 'disk');
    fs.writeFileSync(path.join(dir, 'current', 'proxy', 'edge', 'k'), 'override');
    const layers: RuntimeLayerConfig[] = [
      { kind: 'static', name: 'base', values: [['k', 'static'], ['s', '1']] },
      { kind: 'disk', name: 'disk', symlinkRoot: path.join(dir, 'current'), subdirectory: 'proxy', appendServiceCluster: false },
      { kind: 'disk', name: 'override', symlinkRoot: path.join(dir, 'current'), subdirectory: 'proxy', appendServiceCluster: true },
      { kind: 'disk', name: 'missing', symlinkRoot: path.join(dir, 'nowhere'), subdirectory: 'x', appendServiceCluster: false },
      { kind: 'admin', name: 'admin' },
    ];
    const sources = { serviceCluster: 'edge', admin: new Map([['a', '1']]), readDisk: readDiskLayerIfPresent, rtds: new Map() };
    const loaded = loadLayers(layers, sources);
    assert.deepEqual(loaded.layers.map((l) => l.name), ['base', 'disk', 'override', 'admin']);
    assert.equal(loaded.diskLayers, 2);
    assert.deepEqual(new Map(finalValues(loaded.layers)), new Map([['k', 'override'], ['s', '1'], ['edge.k', 'override'], ['a', '1']]));
    const broken = loadLayers(layers, { ...sources, readDisk: () => { throw new Error('EACCES'); } });
    assert.equal(broken.errors.length, 3);
    assert.deepEqual(broken.layers.map((l) => l.name), ['base', 'admin']);
  });
});

test('the admin layer: values merge in, an empty value deletes only the admin override', () => {
  const admin = mergeAdminValues(new Map([['a', '1']]), [['b', '2'], ['a', '']]);
  assert.deepEqual(admin, new Map([['b', '2']]));
  const layers = [
    { name: 'disk', values: [['d', 'from disk']] as [string, string][] },
    { name: 'admin', values: [...mergeAdminValues(admin, [['d', '']])] },
  ];
  // Deleting `d` in the admin layer leaves the disk's value in place.
  assert.deepEqual(new Map(finalValues(layers)), new Map([['d', 'from disk'], ['b', '2']]));
});

test('GET /runtime JSON: one value per layer, "" when absent, final_value the last non-empty', () => {
  const body = JSON.parse(renderRuntimeJson([
    { name: 'base', values: [['k', 'a'], ['only', 'b']] },
    { name: 'admin', values: [['k', 'c']] },
  ]));
  assert.deepEqual(body, {
    layers: ['base', 'admin'],
    entries: { k: { final_value: 'c', layer_values: ['a', 'c'] }, only: { final_value: 'b', layer_values: ['b', ''] } },
  });
});

test('Runtime accessors read values as Envoy does', () => {
  const r = new Runtime([['int', '42'], ['frac', '3.7'], ['neg', '-1'], ['t', 'TRUE'], ['zero', '0'], ['s', 'text'], ['pct', '{"numerator": 7}']]);
  assert.equal(r.getInteger('int', 1), 42);
  assert.equal(r.getInteger('frac', 1), 3);
  assert.equal(r.getInteger('neg', 1), 1);
  assert.equal(r.getInteger('s', 9), 9);
  assert.equal(r.getBoolean('t', false), true);
  assert.equal(r.getBoolean('int', false), true);
  assert.equal(r.getBoolean('zero', true), false);
  assert.equal(r.getBoolean('s', true), true);
  assert.equal(r.featureEnabled('pct', { numerator: 0, denominator: 'HUNDRED' }, 6), true);
  assert.equal(r.featureEnabled('pct', { numerator: 0, denominator: 'HUNDRED' }, 107), false);
  assert.equal(r.featureEnabled('missing', { numerator: 1, denominator: 'MILLION' }, 2_000_000), true);
});

/** A bootstrap of one STATIC cluster, which every capability of this build accepts. */
function minimal(): Json {
  return { static_resources: { clusters: [localCluster('web', 8080)] } };
}

function load(bootstrap: Json, serviceCluster = ''): ReturnType<typeof loadBootstrap> {
  const loaded = loadBootstrap({ extensions: builtinExtensions(), configYaml: yaml.dump(bootstrap), allowUnknownStaticFields: false, serviceCluster });
  return loaded;
}

function assertConfigError(bootstrap: Json, fieldPath: string, reason: RegExp, serviceCluster = ''): void {
  assert.throws(() => load(bootstrap, serviceCluster), (e: unknown) => e instanceof ConfigError && e.fieldPath === fieldPath && reason.test(e.reason));
}

test('bootstrap: Envoy default layers without layered_runtime; an empty list is one unnamed admin layer', () => {
  assert.deepEqual(load(minimal()).bootstrap.runtimeLayers, [{ kind: 'static', name: 'base', values: [] }, { kind: 'admin', name: 'admin' }]);
  assert.deepEqual(load({ ...minimal(), layered_runtime: { layers: [] } }).bootstrap.runtimeLayers, [{ kind: 'admin', name: '' }]);
});

test('bootstrap: layer errors by field path', () => {
  const admin = { name: 'admin', admin_layer: {} };
  assertConfigError({ ...minimal(), layered_runtime: { layers: [admin, { name: 'admin', static_layer: {} }] } }, 'layered_runtime.layers[1].name', /Duplicate layer name: admin/);
  assertConfigError({ ...minimal(), layered_runtime: { layers: [admin, { name: 'a2', admin_layer: {} }] } }, 'layered_runtime.layers[1].admin_layer', /Too many admin layers/);
  assertConfigError({ ...minimal(), layered_runtime: { layers: [{ name: 'x' }] } }, 'layered_runtime.layers[0].layer_specifier', /is required: set one of static_layer, disk_layer, admin_layer, rtds_layer/);
  assertConfigError({ ...minimal(), layered_runtime: { layers: [{ name: 's', static_layer: { a: null } }] } }, 'layered_runtime.layers[0].static_layer.a', /Invalid runtime entry value/);
  assertConfigError(
    { ...minimal(), layered_runtime: { layers: [{ name: 'rtds', rtds_layer: { name: 'r' } }] } },
    'layered_runtime.layers[0].rtds_layer.rtds_config',
    /^Missing config source specifier in envoy::config::core::v3::ConfigSource$/,
  );
  assertConfigError(
    { ...minimal(), layered_runtime: { layers: [{ name: 'rtds', rtds_layer: { name: 'r', rtds_config: { ads: {} } } }] } },
    'layered_runtime.layers[0].rtds_layer.rtds_config.ads',
    /^ADS must be configured to support an ADS config source$/,
  );
  assertConfigError(
    { ...minimal(), layered_runtime: { layers: [{ name: 'rtds', rtds_layer: { name: 'r', rtds_config: { api_config_source: { api_type: 'GRPC', grpc_services: [{ envoy_grpc: { cluster_name: 'nope' } }] } } } }] } },
    'layered_runtime.layers[0].rtds_layer.rtds_config.api_config_source.grpc_services[0].envoy_grpc.cluster_name',
    /^ApiConfigSource must have a statically defined non-EDS cluster: 'nope' does not exist/,
  );
});

test('bootstrap: an rtds_layer names its resource and config source; it loads empty until its first update', () => {
  const source = { api_config_source: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'web' } }] }, resource_api_version: 'V3', initial_fetch_timeout: '2s' };
  const loaded = load({ ...minimal(), layered_runtime: { layers: [{ name: 'base', static_layer: { k: 'static' } }, { name: 'dyn', rtds_layer: { name: 'flags', rtds_config: source } }] } });
  const rtds = loaded.bootstrap.runtimeLayers[1]!;
  assert.ok(rtds.kind === 'rtds');
  assert.deepEqual([rtds.name, rtds.resourceName, rtds.source.kind, rtds.source.initialFetchTimeoutMs, rtds.source.resourceApiVersion], ['dyn', 'flags', 'api', 2000, 'V3']);
  const sources = { serviceCluster: '', admin: new Map<string, string>(), readDisk: () => null };
  assert.deepEqual(loadLayers(loaded.bootstrap.runtimeLayers, { ...sources, rtds: new Map() }).layers, [
    { name: 'base', values: [['k', 'static']] },
    { name: 'dyn', values: [] },
  ]);
  const updated = loadLayers(loaded.bootstrap.runtimeLayers, { ...sources, rtds: new Map([['dyn', [['k', 'rtds']] as const]]) });
  assert.deepEqual(new Map(finalValues(updated.layers)), new Map([['k', 'rtds']]));
});

test('bootstrap: the v2 runtime field becomes base, root, override and admin layers', () => {
  const b = minimal();
  b.runtime = { symlink_root: '/srv/runtime/current', subdirectory: 'proxy', override_subdirectory: 'proxy_override', base: { a: { b: 1 } } };
  const loaded = loadBootstrap({ extensions: builtinExtensions(), configYaml: yaml.dump(b), allowUnknownStaticFields: false, bootstrapVersion: 2 });
  assert.deepEqual(loaded.bootstrap.runtimeLayers, [
    { kind: 'static', name: 'base', values: [['a.b', '1']] },
    { kind: 'disk', name: 'root', symlinkRoot: '/srv/runtime/current', subdirectory: 'proxy', appendServiceCluster: false },
    { kind: 'disk', name: 'override', symlinkRoot: '/srv/runtime/current', subdirectory: 'proxy_override', appendServiceCluster: true },
    { kind: 'admin', name: 'admin' },
  ]);
  assert.ok(loaded.warnings.some((w) => /^runtime: deprecated option/.test(w)));
});

test('bootstrap: dns_resolvers or use_tcp_for_dns_lookups with the platform DNS feature on at start-up', () => {
  withTempDir((dir) => {
    const feature = 'proxy.restart_features.use_platform_api_for_dns_lookups';
    const b = minimal();
    b.static_resources.clusters = [
      { ...localCluster('a', 1), dns_resolvers: [{ socket_address: { address: '10.0.0.1', port_value: 53 } }] },
      { ...localCluster('b', 2), use_tcp_for_dns_lookups: true },
    ];
    // Off by default: accepted.
    load(b);
    b.layered_runtime = { layers: [{ name: 'static', static_layer: { [feature]: true } }] };
    assertConfigError(b, 'static_resources.clusters[0].dns_resolvers', /use_platform_api_for_dns_lookups is true/);
    // From a disk layer under the service cluster, too.
    fs.mkdirSync(path.join(dir, 'current', 'rt', 'svc', 'proxy', 'restart_features'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'current', 'rt', 'svc', 'proxy', 'restart_features', 'use_platform_api_for_dns_lookups'), '1\n');
    b.static_resources.clusters.shift();
    b.layered_runtime = { layers: [{ name: 'd', disk_layer: { symlink_root: path.join(dir, 'current'), subdirectory: 'rt', append_service_cluster: true } }] };
    load(b, 'other');
    assertConfigError(b, 'static_resources.clusters[0].use_tcp_for_dns_lookups', /UDP only/, 'svc');
  });
});

// An LDS Listener resource goes through a static listener's checks, its errors reported under
// the resource's own path, a connection manager's rds included.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadListenerResource } from '../../src/config/listener_resource';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';
import { loadBootstrap } from '../../src/config/load';
import { httpListener, v3Bootstrap } from '../helpers/config_fixtures';
import type { JsonObject } from '../../src/config/json';

const cluster = { name: 'b', connect_timeout: '1s', load_assignment: { cluster_name: 'b', endpoints: [] } };
const bootstrapSource = { node: { id: 'n', cluster: 'c' }, static_resources: { clusters: [cluster] } };
const routes = (target: string) => [{ match: { prefix: '/' }, route: { cluster: target } }];
const load = (resource: JsonObject, cdsClusters: ReadonlySet<string> = new Set()) =>
  loadListenerResource(resource, 'resources[2]', bootstrapSource, new Set(), builtinExtensions(), '', cdsClusters);

test('a good listener is modelled as a static one', () => {
  const loaded = load(httpListener('dyn', 8080, routes('b')));
  assert.equal(loaded.config.name, 'dyn');
  assert.deepEqual(loaded.config.address, { address: '127.0.0.1', port: 8080 });
  assert.equal(loaded.bootstrap.listeners.length, 1);
});

test("a listener's error is named under the resource's path", () => {
  assert.throws(
    () => load(httpListener('dyn', 8080, routes('nope'))),
    /^.*resources\[2\]\.filter_chains\[0\]\.filters\[0\]\.typed_config\.route_config\.virtual_hosts\[0\]\.routes\[0\]\.route\.cluster: .*nope/,
  );
  assert.throws(() => load({ ...httpListener('dyn', 8080, routes('b')), filter_chains: [] }), /resources\[2\]\.filter_chains: no filter chains specified/);
});

test("an inline route may name a cluster CDS brought, as Envoy validates against the cluster manager's clusters", () => {
  assert.throws(() => load(httpListener('dyn', 8080, routes('from_cds'))), /route\.cluster: route: unknown cluster 'from_cds'/);
  assert.equal(load(httpListener('dyn', 8080, routes('from_cds')), new Set(['from_cds'])).config.name, 'dyn');
});

test("a connection manager's rds is checked as a static one's", () => {
  const rds = { config_source: { ads: {} }, route_config_name: 'r' };
  assert.throws(
    () => load(httpListener('dyn', 8080, [], { route_config: undefined, rds })),
    /resources\[2\]\.filter_chains\[0\]\.filters\[0\]\.typed_config\.rds\.config_source\.ads: ADS must be configured to support an ADS config source/,
  );
  const loaded = load(httpListener('dyn', 8080, [], { route_config: undefined, rds: { ...rds, config_source: { path: __filename } } }));
  assert.equal(loaded.config.name, 'dyn');
});

test('a listener is checked beside the serving bootstrap as loaded (frozen), a cluster with an upstream TLS socket among it', () => {
  const bootstrap = v3Bootstrap();
  const { listeners, clusters } = bootstrap.static_resources;
  const served = loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify({ ...bootstrap, static_resources: { clusters } }), allowUnknownStaticFields: false });
  assert.ok(clusters.some((c: JsonObject) => c['transport_socket'] !== undefined));
  const loaded = loadListenerResource(listeners[1], 'resources[0]', served.bootstrap.source as JsonObject, new Set(), builtinExtensions(), '', new Set());
  assert.equal(loaded.config.name, listeners[1].name);
});

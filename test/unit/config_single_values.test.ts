// A single value where a repeated field is expected is read as a one-element list, as Envoy's
// parser (protobuf's JSON parser, behind both its YAML and its JSON loading) reads it: Envoy's own
// examples write `tls_certificates:` and `access_log:` that way. The rule holds at every depth, in
// YAML and JSON, in the bootstrap as in a discovery response, and for v2 files before their
// upgrade; a list for a singular field and errors' paths stay as they were.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import * as yaml from 'js-yaml';
import { FieldError } from '../../src/config/errors';
import { loadBootstrap } from '../../src/config/load';
import { decodeProtoJson } from '../../src/config/proto_json';
import { protoSchema } from '../../src/config/schema';
import { ResourceDecoder } from '../../src/config/xds/resource_decoder';
import { CLUSTER_RESOURCE } from '../../src/config/xds/resource_types';
import { createHeapStatsStore } from '../../src/stats/store';
import { Json, v2Bootstrap, v3Bootstrap, withTempDir } from '../helpers/config_fixtures';
import { silentLogger } from '../helpers/data_plane';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const ROUTE_CONFIGURATION = 'envoy.config.route.v3.RouteConfiguration';
const schema = protoSchema();

function decode(typeName: string, input: unknown) {
  return decodeProtoJson(schema, schema.root.lookupType(typeName), input, { allowUnknownFields: false }).json;
}

/** `value` with every one-element list replaced by its element, at every depth. */
function singleValued(value: Json): Json {
  if (Array.isArray(value)) return value.length === 1 ? singleValued(value[0]) : value.map(singleValued);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, singleValued(child)]));
}

test('a single message and a single scalar are one-element lists, nested at any depth', () => {
  const written = {
    virtual_hosts: {
      name: 'web',
      domains: '*',
      routes: { match: { prefix: '/' }, route: { cluster: 'c', retry_policy: { retriable_status_codes: 503 } } },
    },
  };
  assert.deepEqual(decode(ROUTE_CONFIGURATION, written), {
    virtual_hosts: [
      { name: 'web', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'c', retry_policy: { retriable_status_codes: [503] } } }] },
    ],
  });
});

test('errors keep the path as written: no index where no list was written', () => {
  const cases: Array<[unknown, string, string]> = [
    [{ virtual_hosts: { name: 'v', domains: '*', routes: { route: { timeout: 'soon' } } } }, 'virtual_hosts.routes.route.timeout', 'invalid duration: "soon"'],
    [{ virtual_hosts: [{ name: 'v', routes: { route: { timeout: 'soon' } } }] }, 'virtual_hosts[0].routes.route.timeout', 'invalid duration: "soon"'],
    [{ virtual_hosts: { routes: 'everything' } }, 'virtual_hosts.routes', 'expected an object, got "everything"'],
    [{ virtual_hosts: { domains: { host: 'a' } } }, 'virtual_hosts.domains', 'expected string: {"host":"a"}'],
  ];
  for (const [input, fieldPath, reason] of cases) {
    assert.throws(() => decode(ROUTE_CONFIGURATION, input), new FieldError(fieldPath, reason));
  }
});

test('a list is still refused for a singular field, and for a map', () => {
  assert.throws(() => decode(ROUTE_CONFIGURATION, { name: ['a'] }), new FieldError('name', 'expected string: ["a"]'));
  assert.throws(
    () => decode('envoy.config.cluster.v3.Cluster', { metadata: { filter_metadata: [{}] } }),
    new FieldError('metadata.filter_metadata', 'expected a map (object), got a list'),
  );
});

test('a bootstrap of single values loads as its lists do: YAML and JSON, --config-yaml and files', () => {
  const expected = loadBootstrap({ extensions: builtinExtensions(), configYaml: yaml.dump(v3Bootstrap()), allowUnknownStaticFields: false }).bootstrap;
  const written = singleValued(v3Bootstrap());
  // The fixture really has single values where lists go.
  assert.ok(!Array.isArray(written.static_resources.listeners[0].filter_chains));
  withTempDir((dir) => {
    fs.writeFileSync(path.join(dir, 'bootstrap.yaml'), yaml.dump(written));
    fs.writeFileSync(path.join(dir, 'bootstrap.json'), JSON.stringify(written));
    const inputs = [
      { configYaml: yaml.dump(written) },
      { configYaml: JSON.stringify(written) },
      { configPath: path.join(dir, 'bootstrap.yaml') },
      { configPath: path.join(dir, 'bootstrap.json') },
    ];
    for (const input of inputs) {
      const loaded = loadBootstrap({ extensions: builtinExtensions(), ...input, bootstrapVersion: 3, allowUnknownStaticFields: false });
      assert.deepEqual(loaded.bootstrap, expected, JSON.stringify(Object.keys(input)));
    }
  });
});

test('a v2 bootstrap of single values is upgraded as its lists are (hosts, filters with `config:`)', () => {
  const expected = loadBootstrap({ extensions: builtinExtensions(), configYaml: yaml.dump(v2Bootstrap()), allowUnknownStaticFields: false });
  const written = singleValued(v2Bootstrap());
  assert.ok(!Array.isArray(written.static_resources.clusters[0].hosts));
  for (const bootstrapVersion of [undefined, 2]) {
    const loaded = loadBootstrap({ extensions: builtinExtensions(), configYaml: yaml.dump(written), bootstrapVersion, allowUnknownStaticFields: false });
    assert.deepEqual(loaded.bootstrap, expected.bootstrap);
    assert.deepEqual(loaded.warnings, expected.warnings);
  }
});

test('a discovery response with a single resource delivers that one resource', async () => {
  const decoder = new ResourceDecoder(schema, 'reject', createHeapStatsStore().counter('server.dynamic_unknown_fields'), silentLogger);
  const resource = { '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster', name: 'c', connect_timeout: '1s', health_checks: { timeout: '1s', interval: '2s', unhealthy_threshold: 1, healthy_threshold: 1, tcp_health_check: {} } };
  const response = await decoder.decode({ version_info: '1', resources: resource }, CLUSTER_RESOURCE);
  assert.deepEqual(response.resources.map((r) => [r.name, r.resource['health_checks']]), [
    ['c', [{ timeout: '1s', interval: '2s', unhealthy_threshold: 1, healthy_threshold: 1, tcp_health_check: {} }]],
  ]);
});

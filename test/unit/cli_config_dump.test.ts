import assert from 'node:assert/strict';
import * as yaml from 'js-yaml';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { redactedBootstrap, renderConfigDump } from '../../src/admin/config_dump_handler';
import { loadBootstrap } from '../../src/config/load';
import { servableV2, servableV3, writeEveryFormat } from '../helpers/cli_bootstraps';
import { withTempDir } from '../helpers/config_fixtures';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const LOADED_AT = new Date('2020-10-08T12:00:00.000Z');
const STRICT = { extensions: builtinExtensions(), allowUnknownStaticFields: false };

function dump(options: Parameters<typeof loadBootstrap>[0], includeEds = false): string {
  return renderConfigDump(redactedBootstrap(loadBootstrap(options).bootstrap), LOADED_AT, { includeEds }).body as string;
}

test('the dump has Envoy\'s entries in config tracker key order', { timeout: 20000 }, () => {
  const text = dump({ configYaml: JSON.stringify(servableV3('/dev/null')), ...STRICT });
  assert.ok(text.startsWith('{\n "configs": [\n  {\n   "@type": "type.googleapis.com/envoy.admin.v3.BootstrapConfigDump",\n'));
  assert.ok(text.endsWith('}\n'));
  const { configs } = JSON.parse(text);
  assert.deepEqual(
    configs.map((c: { '@type': string }) => c['@type'].replace('type.googleapis.com/envoy.admin.v3.', '')),
    ['BootstrapConfigDump', 'ClustersConfigDump', 'ListenersConfigDump', 'ScopedRoutesConfigDump', 'RoutesConfigDump', 'SecretsConfigDump'],
  );
  const [bootstrap, clusters, listeners, , routes] = configs;
  assert.equal(bootstrap.last_updated, '2020-10-08T12:00:00.000Z');
  assert.equal(bootstrap.bootstrap.node.id, 'node-1');
  assert.deepEqual(clusters.static_clusters.map((c: any) => [c.cluster['@type'], c.cluster.name, c.last_updated]), [
    ['type.googleapis.com/envoy.config.cluster.v3.Cluster', 'secure', '2020-10-08T12:00:00.000Z'],
    ['type.googleapis.com/envoy.config.cluster.v3.Cluster', 'plain', '2020-10-08T12:00:00.000Z'],
  ]);
  assert.deepEqual(listeners.static_listeners.map((l: any) => [l.listener['@type'], l.listener.name]), [
    ['type.googleapis.com/envoy.config.listener.v3.Listener', 'tcp_in'],
    ['type.googleapis.com/envoy.config.listener.v3.Listener', 'http_in'],
  ]);
  assert.deepEqual(routes.static_route_configs.map((r: any) => [r.route_config['@type'], r.route_config.name]), [
    ['type.googleapis.com/envoy.config.route.v3.RouteConfiguration', 'local_route'],
  ]);
});

test('without an HTTP connection manager there are no route entries; ?include_eds adds endpoints', { timeout: 20000 }, () => {
  const bootstrap = servableV3('/dev/null');
  bootstrap.static_resources.listeners.pop();
  const types = (text: string) => JSON.parse(text).configs.map((c: { '@type': string }) => c['@type'].split('.').pop());
  const configYaml = JSON.stringify(bootstrap);
  assert.deepEqual(types(dump({ configYaml, ...STRICT })), ['BootstrapConfigDump', 'ClustersConfigDump', 'ListenersConfigDump', 'SecretsConfigDump']);
  const withEds = JSON.parse(dump({ configYaml, ...STRICT }, true)).configs[2];
  assert.equal(withEds['@type'], 'type.googleapis.com/envoy.admin.v3.EndpointsConfigDump');
  assert.deepEqual(withEds.static_endpoint_configs.map((e: any) => e.endpoint_config.cluster_name), ['secure', 'plain']);
});

test('one bootstrap as .yaml, .json, .pb and .pb_text dumps the same', { timeout: 20000 }, () => {
  withTempDir((dir) => {
    const dumps = writeEveryFormat(dir, servableV3('/dev/null')).map((configPath) => dump({ configPath, ...STRICT }));
    for (const other of dumps.slice(1)) assert.equal(other, dumps[0]);
  });
});

test('a v2 bootstrap (hosts, tls_context, config) dumps as its v3 rewrite', { timeout: 20000 }, () => {
  withTempDir((dir) => {
    const v2Path = path.join(dir, 'v2.yaml');
    fs.writeFileSync(v2Path, yaml.dump(servableV2('/dev/null')));
    const v3Path = path.join(dir, 'v3.yaml');
    fs.writeFileSync(v3Path, yaml.dump(servableV3('/dev/null')));
    assert.equal(dump({ configPath: v2Path, ...STRICT }), dump({ configPath: v3Path, ...STRICT }));
  });
});

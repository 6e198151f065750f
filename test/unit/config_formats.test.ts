import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as yaml from 'js-yaml';
import * as protobuf from 'protobufjs/light';
import * as protojson from 'protobufjs/ext/protojson';
import * as textformat from 'protobufjs/ext/textformat';
import { ConfigError } from '../../src/config/errors';
import { loadBootstrap, NO_CONFIG_MESSAGE } from '../../src/config/load';
import { protoSchema } from '../../src/config/schema';
import { Json, v3Bootstrap, withTempDir } from '../helpers/config_fixtures';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const OPTIONS = { extensions: builtinExtensions(), allowUnknownStaticFields: false };

function encodeBinary(bootstrap: Json): Uint8Array {
  const type = protoSchema().bootstrap;
  return type.encode(protojson.fromJson(type, bootstrap)).finish();
}

function writeAllFormats(dir: string, bootstrap: Json): string[] {
  const type = protoSchema().bootstrap;
  const files: Array<[string, string | Uint8Array]> = [
    ['bootstrap.yaml', yaml.dump(bootstrap)],
    ['bootstrap.yml', yaml.dump(bootstrap)],
    ['bootstrap.json', JSON.stringify(bootstrap, null, 2)],
    ['bootstrap.pb', encodeBinary(bootstrap)],
    ['bootstrap.pb_text', textformat.toText(type, protojson.fromJson(type, bootstrap))],
  ];
  return files.map(([name, contents]) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, contents);
    return file;
  });
}

function loadError(options: Parameters<typeof loadBootstrap>[0]): ConfigError {
  try {
    loadBootstrap(options);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error;
  }
  assert.fail('the configuration loaded');
}

test('every file format loads to the same model', { timeout: 20000 }, () => {
  withTempDir((dir) => {
    const [first, ...others] = writeAllFormats(dir, v3Bootstrap()).map((configPath) => {
      const loaded = loadBootstrap({ configPath, ...OPTIONS });
      assert.deepEqual(loaded.warnings, [], configPath);
      assert.deepEqual(loaded.unknownFields, [], configPath);
      return loaded.bootstrap;
    });
    for (const model of others) assert.deepEqual(model, first);
  });
});

test('--config-yaml alone loads like a file', { timeout: 20000 }, () => {
  withTempDir((dir) => {
    const fromFile = loadBootstrap({ configPath: writeAllFormats(dir, v3Bootstrap())[0], ...OPTIONS });
    const fromYaml = loadBootstrap({ configYaml: yaml.dump(v3Bootstrap()), ...OPTIONS });
    assert.deepEqual(fromYaml.bootstrap, fromFile.bootstrap);
  });
});

test('--config-yaml merges over the file as MergeFrom: messages by field, lists append, scalars replace', { timeout: 20000 }, () => {
  withTempDir((dir) => {
    const configPath = path.join(dir, 'bootstrap.yaml');
    fs.writeFileSync(configPath, yaml.dump(v3Bootstrap()));
    const fixture = v3Bootstrap();
    const extra = { ...fixture.static_resources.clusters[1], name: 'extra' };
    const override = {
      node: { id: 'node-2' },
      admin: { address: { socket_address: { port_value: 9902 } } },
      static_resources: { clusters: [extra] },
    };
    const { bootstrap } = loadBootstrap({ configPath, configYaml: JSON.stringify(override), ...OPTIONS });
    assert.equal(bootstrap.node.id, 'node-2');
    assert.equal(bootstrap.node.cluster, 'edge');
    assert.deepEqual(bootstrap.admin, { address: { address: '127.0.0.1', port: 9902 }, accessLogPath: '/dev/null', profilePath: '/var/log/proxy/proxy.prof', security: null });
    assert.deepEqual(
      bootstrap.clusters.map((cluster) => cluster.name),
      [...fixture.static_resources.clusters.map((cluster: { name: string }) => cluster.name), 'extra'],
    );
    assert.equal(bootstrap.listeners.length, fixture.static_resources.listeners.length);
  });
});

test('an error in --config-yaml alone is reported against --config-yaml, with the file given too', { timeout: 20000 }, () => {
  withTempDir((dir) => {
    const configPath = path.join(dir, 'bootstrap.yaml');
    fs.writeFileSync(configPath, yaml.dump(v3Bootstrap()));
    assert.equal(
      loadError({ configPath, configYaml: '{static_resources: {clusters: [{name: x, connect_timeout: soon}]}}', ...OPTIONS }).message,
      '--config-yaml: static_resources.clusters[0].connect_timeout: invalid duration: "soon"',
    );
  });
});

test('--config-yaml merges over a binary file too', { timeout: 20000 }, () => {
  withTempDir((dir) => {
    const configPath = path.join(dir, 'bootstrap.pb');
    fs.writeFileSync(configPath, encodeBinary(v3Bootstrap()));
    const { bootstrap } = loadBootstrap({ configPath, configYaml: 'node: { id: from-yaml }', ...OPTIONS });
    assert.equal(bootstrap.node.id, 'from-yaml');
    assert.equal(bootstrap.node.locality.zone, 'eu-1a');
  });
});

test('with neither a path nor a YAML string, Envoy says so', () => {
  const error = loadError({ ...OPTIONS });
  assert.equal(error.message, NO_CONFIG_MESSAGE);
  assert.equal(NO_CONFIG_MESSAGE, 'At least one of --config-path or --config-yaml or Options::configProto() should be non-empty');
});

test('file problems are one line naming the file', { timeout: 20000 }, () => {
  withTempDir((dir) => {
    const write = (name: string, contents: string | Uint8Array): string => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, contents);
      return file;
    };
    const cases: Array<[string, string]> = [
      [write('bootstrap.conf', '{}'), `unsupported file extension '.conf': expected .json, .yaml, .yml, .pb or .pb_text`],
      [path.join(dir, 'missing.yaml'), 'cannot read the file (ENOENT)'],
      [write('bad.yaml', 'node:\n  id: a\n   cluster: b\n'), 'YAML syntax error at line 3, column 11: bad indentation of a mapping entry'],
      [write('trailing_comma.json', '{"node": {"id": "a",}}'), 'JSON syntax error at line 1, column 21: Expected double-quoted property name'],
      [write('bad.json', '{\n  "node": tru\n}'), 'JSON syntax error: Unexpected token \'\\n\''],
      [write('yaml_in.json', 'node: {id: a}'), 'JSON syntax error: Unexpected token \'o\''],
      [write('bad.pb_text', 'node { id: "a" }\nbogus: 1\n'), `text format error at line 2: unknown field 'bogus'`],
      [write('bad.pb', new Uint8Array([0x0a, 0xff])), 'not a binary envoy.config.bootstrap.v3.Bootstrap: index out of range: 2 + 1 > 2'],
    ];
    for (const [configPath, reason] of cases) {
      assert.equal(loadError({ configPath, ...OPTIONS }).message, `${configPath}: ${reason}`);
    }
  });
});

test('Any inside Any in a binary file counts toward one depth limit', { timeout: 20000 }, () => {
  withTempDir((dir) => {
    // protobufjs bounds each decode, and each Any's content is a decode of its own.
    let any: Uint8Array = new Uint8Array();
    for (let i = 0; i < 150; i++) {
      any = protobuf.Writer.create().uint32((1 << 3) | 2).string('type.googleapis.com/google.protobuf.Any').uint32((2 << 3) | 2).bytes(any).finish();
    }
    const bootstrap = v3Bootstrap();
    const type = protoSchema().bootstrap;
    const message = protojson.fromJson(type, bootstrap) as unknown as Json;
    message.static_resources.listeners[0].filter_chains[0].filters[0].typed_config = { type_url: 'type.googleapis.com/google.protobuf.Any', value: any };
    const configPath = path.join(dir, 'any_in_any.pb');
    fs.writeFileSync(configPath, type.encode(message).finish());
    assert.equal(
      loadError({ configPath, ...OPTIONS }).message,
      `${configPath}: static_resources.listeners[0].filter_chains[0].filters[0].typed_config: nesting deeper than 100 levels (limit)`,
    );
  });
});

test('a YAML error in --config-yaml is reported against --config-yaml', () => {
  assert.equal(
    loadError({ configYaml: 'node: [', ...OPTIONS }).message,
    '--config-yaml: YAML syntax error at line 1, column 8: unexpected end of the stream within a flow collection',
  );
});

test('unknown fields are rejected with their path, or skipped and listed when allowed', { timeout: 20000 }, () => {
  const bootstrap = v3Bootstrap();
  bootstrap.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.bogus_inside_any = 'x';
  bootstrap.static_resources.clusters[1].load_assignment.endpoints[0].lb_endpoints[1].endpoint.bogus = true;
  bootstrap.bogus_top = 1;
  const configYaml = JSON.stringify(bootstrap);

  assert.equal(
    loadError({ configYaml, ...OPTIONS }).message,
    '--config-yaml: static_resources.listeners[0].filter_chains[0].filters[0].typed_config.bogus_inside_any: unknown field',
  );
  const loaded = loadBootstrap({ extensions: builtinExtensions(), configYaml, allowUnknownStaticFields: true });
  assert.deepEqual(loaded.unknownFields, [
    'static_resources.listeners[0].filter_chains[0].filters[0].typed_config.bogus_inside_any',
    'static_resources.clusters[1].load_assignment.endpoints[0].lb_endpoints[1].endpoint.bogus',
    'bogus_top',
  ]);
  assert.deepEqual(loaded.bootstrap, loadBootstrap({ configYaml: JSON.stringify(v3Bootstrap()), ...OPTIONS }).bootstrap);
});

test('unknown field numbers in a binary file are rejected, or skipped and listed when allowed', { timeout: 20000 }, () => {
  withTempDir((dir) => {
    const configPath = path.join(dir, 'bootstrap.pb');
    const unknownField = protobuf.Writer.create().uint32((999 << 3) | 0).uint32(1).finish();
    fs.writeFileSync(configPath, Buffer.concat([encodeBinary(v3Bootstrap()), unknownField]));
    assert.equal(loadError({ configPath, ...OPTIONS }).message, `${configPath}: #999: unknown field`);
    const loaded = loadBootstrap({ extensions: builtinExtensions(), configPath, allowUnknownStaticFields: true });
    assert.deepEqual(loaded.unknownFields, ['#999']);
    assert.equal(loaded.bootstrap.clusters.length, 2);
  });
});

test('type URLs may name the proxy package in place of envoy', () => {
  const bootstrap = v3Bootstrap();
  const filter = bootstrap.static_resources.listeners[0].filter_chains[0].filters[0];
  filter.typed_config['@type'] = 'type.googleapis.com/proxy.extensions.filters.network.tcp_proxy.v3.TcpProxy';
  const loaded = loadBootstrap({ configYaml: JSON.stringify(bootstrap), ...OPTIONS });
  assert.deepEqual(loaded.bootstrap, loadBootstrap({ configYaml: JSON.stringify(v3Bootstrap()), ...OPTIONS }).bootstrap);
});

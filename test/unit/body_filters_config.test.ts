// The configuration of the compressor, gzip, buffer, grpc_web and grpc_http1_bridge filters: what
// Envoy 1.16 accepts loads, with its defaults in the model; what it refuses, and what this build
// would ignore, is refused at its field path.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import * as yaml from 'js-yaml';
import { loadBootstrap } from '../../src/config/load';
import type { HttpFilterConfig } from '../../src/config/model';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

type Json = Record<string, any>;

const DEFAULT_CONFIG = path.resolve(__dirname, '..', '..', '..', 'configs', 'default.yaml');
const HCM = 'static_resources.listeners[0].filter_chains[0].filters[0].typed_config';

const COMPRESSOR = {
  name: 'envoy.filters.http.compressor',
  typed_config: {
    '@type': 'type.googleapis.com/envoy.extensions.filters.http.compressor.v3.Compressor',
    content_length: 100,
    content_type: ['Text/HTML', 'application/json'],
    disable_on_etag_header: true,
    runtime_enabled: { default_value: false, runtime_key: 'compression.enabled' },
    compressor_library: {
      name: 'text_optimized',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.compression.gzip.compressor.v3.Gzip',
        memory_level: 3,
        window_bits: 10,
        compression_level: 'best_compression',
        compression_strategy: 'rle',
        chunk_size: 8192,
      },
    },
  },
};
const GZIP = {
  name: 'envoy.gzip',
  typed_config: { '@type': 'type.googleapis.com/envoy.config.filter.http.gzip.v2.Gzip', compression_level: 'SPEED', compressor: { remove_accept_encoding_header: true } },
};
const BUFFER = { name: 'envoy.buffer', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.buffer.v3.Buffer', max_request_bytes: 4096 } };

/** The default config with the five filters before its router. */
function bootstrap(): Json {
  const b = yaml.load(fs.readFileSync(DEFAULT_CONFIG, 'utf8')) as Json;
  const hcm = b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config;
  hcm.http_filters = [structuredClone(COMPRESSOR), structuredClone(GZIP), structuredClone(BUFFER), { name: 'envoy.grpc_web' }, { name: 'envoy.filters.http.grpc_http1_bridge' }, ...hcm.http_filters];
  return b;
}

const filters = (b: Json): Json[] => b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http_filters;

function load(b: Json): readonly HttpFilterConfig[] {
  const { bootstrap: model } = loadBootstrap({ extensions: builtinExtensions(), configYaml: yaml.dump(b), allowUnknownStaticFields: false });
  const hcm = model.listeners[0]!.filterChains[0]!.filters[0]!;
  assert.equal(hcm.kind, 'http_connection_manager');
  return hcm.httpFilters;
}

test('the five filters load, Envoy 1.16 defaults filled in', () => {
  const [compressor, gzip, buffer, grpcWeb, bridge] = load(bootstrap());
  assert.deepEqual(compressor, {
    name: 'proxy.filters.http.compressor',
    compressor: {
      statPrefix: 'compressor.text_optimized.gzip',
      minContentLength: 100,
      contentTypes: ['text/html', 'application/json'],
      disableOnEtagHeader: true,
      removeAcceptEncodingHeader: false,
      runtimeEnabled: { runtimeKey: 'compression.enabled', defaultValue: false },
      gzip: { level: 9, strategy: 3, memoryLevel: 3, windowBits: 10, chunkSize: 8192 },
    },
  });
  assert.equal(gzip!.name, 'proxy.filters.http.gzip');
  assert.equal(gzip!.compressor!.statPrefix, 'gzip');
  assert.equal(gzip!.compressor!.minContentLength, 30);
  assert.equal(gzip!.compressor!.contentTypes.length, 18);
  assert.equal(gzip!.compressor!.removeAcceptEncodingHeader, true);
  assert.deepEqual(gzip!.compressor!.gzip, { level: 1, strategy: 0, memoryLevel: 5, windowBits: 12, chunkSize: 4096 });
  assert.deepEqual(buffer, { name: 'proxy.filters.http.buffer', buffer: { disabled: false, maxRequestBytes: 4096 } });
  assert.deepEqual(grpcWeb, { name: 'proxy.filters.http.grpc_web' });
  assert.deepEqual(bridge, { name: 'proxy.filters.http.grpc_http1_bridge' });
});

const ROUTE = `${HCM}.route_config.virtual_hosts[0].routes[0]`;
const route = (b: Json): Json => b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0];
const bufferPerRoute = (config: object) => ({ 'envoy.filters.http.buffer': { '@type': 'type.googleapis.com/envoy.extensions.filters.http.buffer.v3.BufferPerRoute', ...config } });

test("a route's BufferPerRoute: disabled, or a buffer of its own (v2 per_filter_config too)", () => {
  const routeConfigOf = (b: Json) => {
    const { bootstrap: model } = loadBootstrap({ extensions: builtinExtensions(), configYaml: yaml.dump(b), allowUnknownStaticFields: false });
    const hcm = model.listeners[0]!.filterChains[0]!.filters[0]!;
    assert.equal(hcm.kind, 'http_connection_manager');
    return hcm.routeConfig.virtualHosts[0]!;
  };
  const b = bootstrap();
  route(b).typed_per_filter_config = bufferPerRoute({ disabled: true });
  b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].per_filter_config = { 'envoy.buffer': { buffer: { max_request_bytes: 5 } } };
  const virtualHost = routeConfigOf(b);
  assert.deepEqual(virtualHost.routes[0]!.perFilterConfig, { 'proxy.filters.http.buffer': { disabled: true, maxRequestBytes: 0 } });
  assert.deepEqual(virtualHost.perFilterConfig, { 'proxy.filters.http.buffer': { disabled: false, maxRequestBytes: 5 } });
});

const REFUSED: readonly [string, (b: Json) => void, string][] = [
  ['a BufferPerRoute that says neither', (b) => (route(b).typed_per_filter_config = bufferPerRoute({})), `${ROUTE}.typed_per_filter_config["envoy.filters.http.buffer"].override: is required: set one of disabled, buffer`],
  ['BufferPerRoute disabled: false', (b) => (route(b).typed_per_filter_config = bufferPerRoute({ disabled: false })), `${ROUTE}.typed_per_filter_config["envoy.filters.http.buffer"].disabled: value must equal true`],
  ["a BufferPerRoute's buffer without max_request_bytes", (b) => (route(b).typed_per_filter_config = bufferPerRoute({ buffer: {} })), `${ROUTE}.typed_per_filter_config["envoy.filters.http.buffer"].buffer.max_request_bytes: value is required`],
  ['a compressor without a library', (b) => delete filters(b)[0].typed_config.compressor_library, `${HCM}.http_filters[0].typed_config.compressor_library: Didn't find a registered implementation for type: ''`],
  [
    'brotli, which Envoy 1.16 does not have',
    (b) => (filters(b)[0].typed_config.compressor_library.typed_config = { '@type': 'type.googleapis.com/envoy.extensions.compression.brotli.compressor.v3.Brotli' }),
    `${HCM}.http_filters[0].typed_config.compressor_library.typed_config.@type: unknown type 'type.googleapis.com/envoy.extensions.compression.brotli.compressor.v3.Brotli'`,
  ],
  [
    'a library that is no compressor',
    (b) => (filters(b)[0].typed_config.compressor_library.typed_config = { '@type': 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors' }),
    `${HCM}.http_filters[0].typed_config.compressor_library.typed_config.@type: Didn't find a registered implementation for type: 'envoy.extensions.filters.http.cors.v3.Cors'`,
  ],
  ['a later Envoy\'s response_direction_config', (b) => (filters(b)[0].typed_config.response_direction_config = {}), `${HCM}.http_filters[0].typed_config.response_direction_config: response_direction_config is not a field of Envoy 1.16's Compressor`],
  ['gzip memory_level 10', (b) => (filters(b)[0].typed_config.compressor_library.typed_config.memory_level = 10), `${HCM}.http_filters[0].typed_config.compressor_library.typed_config.memory_level: value must be inside range [1, 9]`],
  ['a runtime flag without a key', (b) => (filters(b)[0].typed_config.runtime_enabled = { default_value: true }), `${HCM}.http_filters[0].typed_config.runtime_enabled.runtime_key: value length must be at least 1 runes`],
  [
    "the gzip filter's compressor_library, which it ignores",
    (b) => (filters(b)[1].typed_config.compressor.compressor_library = COMPRESSOR.typed_config.compressor_library),
    `${HCM}.http_filters[1].typed_config.compressor.compressor_library: compressor_library is ignored by the gzip filter, as in Envoy 1.16: use proxy.filters.http.compressor`,
  ],
  ['a buffer without max_request_bytes', (b) => delete filters(b)[2].typed_config, `${HCM}.http_filters[2].typed_config.max_request_bytes: value is required`],
  ['max_request_bytes 0', (b) => (filters(b)[2].typed_config.max_request_bytes = 0), `${HCM}.http_filters[2].typed_config.max_request_bytes: value must be greater than 0`],
  [
    "a later Envoy's bridge option",
    (b) => (filters(b)[4].typed_config = { '@type': 'type.googleapis.com/envoy.extensions.filters.http.grpc_http1_bridge.v3.Config', upgrade_protobuf_to_grpc: true }),
    `${HCM}.http_filters[4].typed_config.upgrade_protobuf_to_grpc: upgrade_protobuf_to_grpc is not a field of Envoy 1.16's gRPC HTTP/1.1 bridge`,
  ],
];

for (const [name, change, message] of REFUSED) {
  test(`refused by field path: ${name}`, () => {
    const b = bootstrap();
    change(b);
    assert.throws(() => load(b), (e: Error) => {
      assert.equal(e.message, `--config-yaml: ${message}`);
      return true;
    });
  });
}

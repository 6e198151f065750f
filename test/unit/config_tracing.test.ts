// Tracing configuration as the loader takes it: the bootstrap's tracer and a connection
// manager's own provider (Zipkin, under Envoy's names), the manager's and a route's tracing and a
// route's decorator modelled with Envoy 1.16's defaults; what this build does not honour refused
// by field path, with the reason; v2's tracing fields upgraded or refused.

import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import * as yaml from 'js-yaml';
import type { HttpConnectionManagerConfig } from '../../src/config/model';
import { loadBootstrap } from '../../src/config/load';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const DEFAULT_CONFIG = path.resolve(__dirname, '..', '..', '..', 'configs', 'default.yaml');
const ZIPKIN_TYPE = 'type.googleapis.com/envoy.config.trace.v3.ZipkinConfig';
const HCM = 'static_resources.listeners[0].filter_chains[0].filters[0].typed_config';
type Json = Record<string, any>;

function bootstrap(): Json {
  return yaml.load(require('node:fs').readFileSync(DEFAULT_CONFIG, 'utf8')) as Json;
}

function zipkin(extra: Json = {}): Json {
  return { name: 'envoy.tracers.zipkin', typed_config: { '@type': ZIPKIN_TYPE, collector_cluster: 'demo_backend', collector_endpoint: '/api/v2/spans', collector_endpoint_version: 'HTTP_JSON', ...extra } };
}

function connectionManager(b: Json): Json {
  return b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config;
}

function load(b: Json, version?: number) {
  return loadBootstrap({ extensions: builtinExtensions(), configYaml: yaml.dump(b), allowUnknownStaticFields: false, bootstrapVersion: version });
}

function modelOf(b: Json): HttpConnectionManagerConfig {
  return load(b).bootstrap.listeners[0]!.filterChains[0]!.filters[0] as HttpConnectionManagerConfig;
}

test('the bootstrap tracer and the manager tracing, modelled with Envoy 1.16 defaults', () => {
  const b = bootstrap();
  b.tracing = { http: zipkin({ collector_hostname: 'zipkin.internal' }) };
  connectionManager(b).tracing = {};
  const loaded = load(b).bootstrap;
  assert.deepEqual(loaded.tracing, {
    kind: 'zipkin',
    name: 'proxy.tracers.zipkin',
    collectorCluster: 'demo_backend',
    collectorEndpoint: '/api/v2/spans',
    collectorHostname: 'zipkin.internal',
    traceId128Bit: false,
    sharedSpanContext: true,
  });
  assert.deepEqual((loaded.listeners[0]!.filterChains[0]!.filters[0] as HttpConnectionManagerConfig).tracing, {
    clientSampling: { numerator: 100, denominator: 'HUNDRED' },
    randomSampling: { numerator: 10_000, denominator: 'TEN_THOUSAND' },
    overallSampling: { numerator: 100, denominator: 'HUNDRED' },
    verbose: false,
    maxPathTagLength: 256,
    customTags: [],
    provider: null,
  });
});

test('samplings as Envoy converts the Percents; custom tags; a provider of its own, by its legacy name', () => {
  const b = bootstrap();
  connectionManager(b).tracing = {
    client_sampling: { value: 29.9 },
    random_sampling: { value: 0.05 },
    overall_sampling: { value: 50 },
    verbose: true,
    max_path_tag_length: 64,
    custom_tags: [
      { tag: 'a', literal: { value: 'x' } },
      { tag: 'b', environment: { name: 'HOME', default_value: 'none' } },
      { tag: 'c', request_header: { name: 'X-Tenant' } },
    ],
    provider: { ...zipkin({ shared_span_context: false, trace_id_128bit: true }), name: 'envoy.zipkin' },
  };
  const tracing = modelOf(b).tracing!;
  assert.deepEqual(tracing.clientSampling, { numerator: 29, denominator: 'HUNDRED' });
  assert.deepEqual(tracing.randomSampling, { numerator: 5, denominator: 'TEN_THOUSAND' });
  assert.deepEqual(tracing.overallSampling, { numerator: 50, denominator: 'HUNDRED' });
  assert.equal(tracing.verbose, true);
  assert.equal(tracing.maxPathTagLength, 64);
  assert.deepEqual(tracing.customTags, [
    { tag: 'a', kind: 'literal', value: 'x' },
    { tag: 'b', kind: 'environment', name: 'HOME', defaultValue: 'none' },
    { tag: 'c', kind: 'request_header', name: 'x-tenant', defaultValue: '' },
  ]);
  assert.equal(tracing.provider?.name, 'proxy.tracers.zipkin');
  assert.equal(tracing.provider?.sharedSpanContext, false);
  assert.equal(tracing.provider?.traceId128Bit, true);
});

test("a route's tracing (FractionalPercents, 100% unset) and decorator", () => {
  const b = bootstrap();
  const route = connectionManager(b).route_config.virtual_hosts[0].routes[0];
  route.tracing = { random_sampling: { numerator: 5, denominator: 'MILLION' }, custom_tags: [{ tag: 'r', literal: { value: 'y' } }] };
  route.decorator = { operation: 'checkout', propagate: false };
  const modelled = modelOf(b).routeConfig.virtualHosts[0]!.routes[0]!;
  assert.deepEqual(modelled.tracing, {
    clientSampling: { numerator: 100, denominator: 'HUNDRED' },
    randomSampling: { numerator: 5, denominator: 'MILLION' },
    overallSampling: { numerator: 100, denominator: 'HUNDRED' },
    customTags: [{ tag: 'r', kind: 'literal', value: 'y' }],
  });
  assert.deepEqual(modelled.decorator, { operation: 'checkout', propagate: false });
});

test('collector_endpoint_version: unset (HTTP_JSON_V1), HTTP_PROTO and GRPC are refused at their path, with the reason', () => {
  for (const [version, reason] of [
    [undefined, /v1 JSON.*set HTTP_JSON/],
    ['HTTP_PROTO', /protobuf reports are not implemented by this build: set HTTP_JSON/],
    ['GRPC', /gRPC reports are implemented neither by Envoy 1.16 nor by this build/],
  ] as const) {
    const b = bootstrap();
    b.tracing = { http: zipkin({ collector_endpoint_version: version }) };
    if (version === undefined) delete b.tracing.http.typed_config.collector_endpoint_version;
    assert.throws(() => load(b), (e: Error) => e.message.includes('tracing.http.typed_config.collector_endpoint_version: ') && reason.test(e.message), String(version));
  }
});

test('an unknown collector cluster, tracer or field is refused by path', () => {
  const unknownCluster = bootstrap();
  unknownCluster.tracing = { http: zipkin({ collector_cluster: 'nowhere' }) };
  assert.throws(() => load(unknownCluster), /tracing\.http\.typed_config\.collector_cluster: proxy\.tracers\.zipkin: unknown cluster 'nowhere'/);

  const unknownTracer = bootstrap();
  connectionManager(unknownTracer).tracing = { provider: { name: 'envoy.tracers.datadog' } };
  assert.throws(() => load(unknownTracer), new RegExp(`${HCM.replace(/[.[\]]/g, '\\$&')}\\.tracing\\.provider\\.name: Didn't find a registered implementation for name: 'proxy.tracers.datadog'`));

  const metadata = bootstrap();
  connectionManager(metadata).tracing = { custom_tags: [{ tag: 'm', metadata: { kind: { request: {} }, metadata_key: { key: 'k', path: [{ key: 'p' }] } } }] };
  assert.throws(() => load(metadata), /tracing\.custom_tags\[0\]\.metadata: metadata custom tags \(request, route, cluster or host metadata\) are not implemented by this build/);

  const spawn = bootstrap();
  connectionManager(spawn).tracing = { spawn_upstream_span: true };
  assert.throws(() => load(spawn), /tracing\.spawn_upstream_span: spawn_upstream_span is not implemented by this build yet/);

  const split = bootstrap();
  split.tracing = { http: zipkin({ split_spans_for_request: true }) };
  assert.throws(() => load(split), /tracing\.http\.typed_config\.split_spans_for_request: split_spans_for_request is not implemented by this build yet/);
});

test('v2: request_headers_for_tags become request_header custom tags, ahead of custom_tags; operation_name EGRESS is refused', () => {
  const b = bootstrap();
  connectionManager(b).tracing = { operation_name: 'INGRESS', request_headers_for_tags: ['x-user'], custom_tags: [{ tag: 'x-user', literal: { value: 'shadowed' } }] };
  const loaded = load(b, 2);
  const tracing = (loaded.bootstrap.listeners[0]!.filterChains[0]!.filters[0] as HttpConnectionManagerConfig).tracing!;
  assert.deepEqual(tracing.customTags, [
    { tag: 'x-user', kind: 'request_header', name: 'x-user', defaultValue: '' },
    { tag: 'x-user', kind: 'literal', value: 'shadowed' },
  ]);
  assert.ok(loaded.warnings.some((w) => w.endsWith('tracing.request_headers_for_tags: deprecated option, use custom_tags instead')));

  const egress = bootstrap();
  connectionManager(egress).tracing = { operation_name: 'EGRESS' };
  assert.throws(() => load(egress, 2), /tracing\.operation_name: operation_name EGRESS, deprecated in v2 and dropped from v3 \(the listener's traffic_direction OUTBOUND replaces it\)/);
});

test('v2: the bootstrap tracer configured with a config Struct is typed', () => {
  const b = bootstrap();
  b.tracing = { http: { name: 'envoy.zipkin', config: { collector_cluster: 'demo_backend', collector_endpoint: '/api/v2/spans', collector_endpoint_version: 'HTTP_JSON' } } };
  assert.equal(load(b, 2).bootstrap.tracing?.collectorCluster, 'demo_backend');
});

import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import * as yaml from 'js-yaml';
import { ConfigError, ConfigErrors } from '../../src/config/errors';
import { loadBootstrap } from '../../src/config/load';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const DEFAULT_CONFIG = path.resolve(__dirname, '..', '..', '..', 'configs', 'default.yaml');
type Json = Record<string, any>;

function defaultBootstrap(): Json {
  return yaml.load(require('node:fs').readFileSync(DEFAULT_CONFIG, 'utf8')) as Json;
}

function check(bootstrap: Json): void {
  loadBootstrap({ extensions: builtinExtensions(), configYaml: yaml.dump(bootstrap), allowUnknownStaticFields: false });
}

test('the default config and the spec-ignored DNS fields of a STATIC cluster pass', () => {
  const b = defaultBootstrap();
  Object.assign(b.static_resources.clusters[0], { dns_refresh_rate: '3s', respect_dns_ttl: true, metadata: { filter_metadata: { x: { a: 1 } } } });
  b.stats_flush_interval = '1s';
  check(b);
});

test('accept_http_10 and default_host_for_http_10 pass', () => {
  const b = defaultBootstrap();
  b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http_protocol_options = { accept_http_10: true, default_host_for_http_10: 'legacy.local' };
  check(b);
});

test('the connection manager protocol options pass: common_http_protocol_options, header_key_format proper_case_words', () => {
  const b = defaultBootstrap();
  Object.assign(b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config, {
    common_http_protocol_options: {
      idle_timeout: '60s',
      max_connection_duration: '600s',
      max_headers_count: 50,
      max_stream_duration: '30s',
      headers_with_underscores_action: 'REJECT_REQUEST',
    },
    http_protocol_options: { header_key_format: { proper_case_words: {} } },
  });
  check(b);
});

test('max_headers_count below 1 is refused by field path, as Envoy validates it', () => {
  const b = defaultBootstrap();
  b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.common_http_protocol_options = { max_headers_count: 0 };
  assert.throws(() => check(b), /typed_config\.common_http_protocol_options\.max_headers_count: value must be greater than or equal to 1/);
});

const FLOOD_LIMITS = {
  max_outbound_frames: 5000,
  max_outbound_control_frames: 500,
  max_consecutive_inbound_frames_with_empty_payload: 0,
  max_inbound_priority_frames_per_stream: 0,
  max_inbound_window_update_frames_per_data_frame_sent: 5,
};

test("the connection manager's HTTP/2 flood limits pass, 0 where Envoy allows it", () => {
  const b = defaultBootstrap();
  b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http2_protocol_options = FLOOD_LIMITS;
  check(b);
});

for (const field of ['max_outbound_frames', 'max_outbound_control_frames', 'max_inbound_window_update_frames_per_data_frame_sent']) {
  test(`http2_protocol_options.${field} below 1 is refused by field path, as Envoy validates it`, () => {
    const b = defaultBootstrap();
    b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http2_protocol_options = { [field]: 0 };
    assert.throws(() => check(b), new RegExp(`typed_config\\.http2_protocol_options\\.${field}: value must be greater than or equal to 1`));
  });
}

test('stats_config: fixed tags, default rules by name, bucket settings pass', () => {
  const b = defaultBootstrap();
  b.stats_config = {
    stats_tags: [{ tag_name: 'region', fixed_value: 'eu' }, { tag_name: 'envoy.cluster_name' }],
    use_all_default_tags: false,
    histogram_bucket_settings: [
      { match: { suffix: '_ms', ignore_case: true }, buckets: [1, 10] },
      { match: { safe_regex: { google_re2: { max_program_size: 50 }, regex: 'cluster\\.[^.]+\\.upstream_rq_time' } }, buckets: [5] },
    ],
  };
  check(b);
});

const TCP_CHECK = { timeout: '1s', interval: '1s', unhealthy_threshold: 1, healthy_threshold: 1, tcp_health_check: {} };

const cases: [string, (b: Json) => void, string][] = [
  ['health check TLS options', (b) => (b.static_resources.clusters[0].health_checks = [{ ...TCP_CHECK, tls_options: { alpn_protocols: ['h2'] } }]), 'static_resources.clusters[0].health_checks[0].tls_options: tls_options is not implemented'],
  ['a custom health checker', (b) => (b.static_resources.clusters[0].health_checks = [{ timeout: '1s', interval: '1s', unhealthy_threshold: 1, healthy_threshold: 1, custom_health_check: { name: 'x' } }]), 'static_resources.clusters[0].health_checks[0].custom_health_check: custom_health_check is not implemented'],
  ['the health check event service', (b) => (b.static_resources.clusters[0].health_checks = [{ ...TCP_CHECK, event_service: { grpc_service: { envoy_grpc: { cluster_name: 'x' } } } }]), 'static_resources.clusters[0].health_checks[0].event_service: event_service is not implemented'],
  ['an HTTP/2 health check', (b) => (b.static_resources.clusters[0].health_checks = [{ ...TCP_CHECK, tcp_health_check: undefined, http_health_check: { path: '/', codec_client_type: 'HTTP2' } }]), 'static_resources.clusters[0].health_checks[0].http_health_check.codec_client_type: codec_client_type HTTP2 is not implemented'],
  ['an HTTP health check payload', (b) => (b.static_resources.clusters[0].health_checks = [{ ...TCP_CHECK, tcp_health_check: undefined, http_health_check: { path: '/', send: { text: '00' } } }]), 'static_resources.clusters[0].health_checks[0].http_health_check.send: send is not implemented'],
  ['upstream TLS from a certificate provider', (b) => (b.static_resources.clusters[0].transport_socket = { name: 'proxy.transport_sockets.tls', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', common_tls_context: { tls_certificate_provider_instance: { instance_name: 'p' } } } }), 'static_resources.clusters[0].transport_socket.typed_config.common_tls_context.tls_certificate_provider_instance: tls_certificate_provider_instance is not implemented'],
  ['a generic secret', (b) => (b.static_resources.secrets = [{ name: 'g', generic_secret: { secret: { inline_string: 'x' } } }]), 'static_resources.secrets[0].generic_secret: generic_secret is not implemented'],
  // Newer than 1.16.
  ['least request slow start', (b) => Object.assign(b.static_resources.clusters[0], { lb_policy: 'LEAST_REQUEST', least_request_lb_config: { slow_start_config: { slow_start_window: '10s' } } }), 'static_resources.clusters[0].least_request_lb_config.slow_start_config: slow_start_config is not implemented'],
  // Upgrades are not sent to HTTP/2 upstreams.
  ['an upstream extended CONNECT', (b) => (b.static_resources.clusters[0].http2_protocol_options = { allow_connect: true }), 'static_resources.clusters[0].http2_protocol_options.allow_connect: allow_connect is not implemented'],
  // Envoy 1.16 checks floods on downstream connections only.
  ['an upstream flood limit', (b) => (b.static_resources.clusters[0].http2_protocol_options = { max_outbound_frames: 10 }), 'static_resources.clusters[0].http2_protocol_options.max_outbound_frames: max_outbound_frames is not implemented'],
  // nghttp2 resets a malformed stream without telling node:http2: the connection cannot be closed for it.
  ['closing the connection on a malformed HTTP/2 message', (b) => (b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http2_protocol_options = { stream_error_on_invalid_http_messaging: true }), 'typed_config.http2_protocol_options.stream_error_on_invalid_http_messaging: stream_error_on_invalid_http_messaging is not implemented'],
  ['a router option', (b) => (b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http_filters[0].typed_config.suppress_envoy_headers = true), 'http_filters[0].typed_config.suppress_envoy_headers: suppress_envoy_headers is not implemented'],
  ['an HTTP/1 option other than the HTTP/1.0 ones', (b) => (b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http_protocol_options = { accept_http_10: true, allow_absolute_url: false }), 'typed_config.http_protocol_options.allow_absolute_url: allow_absolute_url is not implemented'],
  // Envoy 1.17's extension point; 1.16 has proper_case_words only.
  ['a stateful header key formatter', (b) => (b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http_protocol_options = { header_key_format: { stateful_formatter: { name: 'f', typed_config: { '@type': 'type.googleapis.com/google.protobuf.Struct', value: {} } } } }), 'typed_config.http_protocol_options.header_key_format.stateful_formatter: stateful_formatter is not implemented'],
  ['a stats matcher', (b) => (b.stats_config = { stats_matcher: { reject_all: true } }), 'stats_config.stats_matcher: stats_matcher is not implemented'],
  ['a tag regex', (b) => (b.stats_config = { stats_tags: [{ tag_name: 'x', regex: '^a\\.((.*?)\\.)' }] }), 'stats_config.stats_tags[0].regex: regex is not implemented'],
  ['a runtime layer from the self config source', (b) => (b.layered_runtime = { layers: [{ name: 'rtds', rtds_layer: { name: 'r', rtds_config: { self: {} } } }] }), 'layered_runtime.layers[0].rtds_layer.rtds_config.self: self is not implemented'],
  // Envoy 1.18's: 1.16 flushes on its timer only.
  ['flushing stats on admin requests', (b) => (b.stats_flush_on_admin = true), 'stats_flush_on_admin: stats_flush_on_admin is not implemented'],
];

for (const [what, mutate, message] of cases) {
  test(`${what} is refused by field path`, () => {
    const b = defaultBootstrap();
    mutate(b);
    assert.throws(() => check(b), (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.ok(e.message.startsWith('--config-yaml: '), e.message);
      assert.ok(e.message.includes(message), e.message);
      assert.match(e.message, /\(it would be ignored\)$/);
      return true;
    });
  });
}

test('every unimplemented field is reported, not just the first', () => {
  const b = defaultBootstrap();
  b.static_resources.clusters[0].health_checks = [{ ...TCP_CHECK, tls_options: {} }];
  b.stats_config = { stats_matcher: { reject_all: true } };
  b.layered_runtime = { layers: [{ name: 'rtds', rtds_layer: { name: 'r', rtds_config: { self: {} } } }] };
  assert.throws(() => check(b), (e: unknown) => {
    assert.ok(e instanceof ConfigErrors);
    assert.deepEqual(e.all.map((x) => x.fieldPath).sort(), [
      'layered_runtime.layers[0].rtds_layer.rtds_config.self',
      'static_resources.clusters[0].health_checks[0].tls_options',
      'stats_config.stats_matcher',
    ]);
    return true;
  });
});

test('validation reports every invalid resource, each at its first problem', () => {
  const b = defaultBootstrap();
  b.static_resources.clusters.push({ name: 'demo_backend', load_assignment: { cluster_name: 'x' } });
  b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].route.cluster = 'nope';
  assert.throws(() => loadBootstrap({ extensions: builtinExtensions(), configYaml: yaml.dump(b), allowUnknownStaticFields: false }), (e: unknown) => {
    assert.ok(e instanceof ConfigErrors);
    assert.equal(e.all.length, 2);
    assert.match(e.all[0]!.message, /static_resources\.clusters\[1\]\.name: cluster manager: duplicate cluster 'demo_backend'/);
    assert.match(e.all[1]!.message, /static_resources\.listeners\[0\].*unknown cluster 'nope'/);
    return true;
  });
});

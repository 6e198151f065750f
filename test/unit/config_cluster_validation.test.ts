// Each cluster rule of the spec (and Envoy's load-time checks for the cluster types this build
// serves) through the loader, in v2 and v3 form: the message names the cluster's field path.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/errors';
import { loadBootstrap } from '../../src/config/load';
import type { Json } from '../helpers/config_fixtures';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const CLUSTER = 'static_resources.clusters[0]';
const address = (host: string, port: number): Json => ({ socket_address: { address: host, port_value: port } });
const assignment = (...hosts: string[]): Json => ({
  cluster_name: 'c',
  endpoints: [{ lb_endpoints: hosts.map((host) => ({ endpoint: { address: address(host, 80) } })) }],
});

function bootstrap(fields: Json, more: Json[] = []): Json {
  const cluster = Object.fromEntries(
    Object.entries({ name: 'c', connect_timeout: '1s', load_assignment: assignment('10.0.0.1'), ...fields }).filter(([, v]) => v !== undefined),
  );
  return { static_resources: { clusters: [cluster, ...more] } };
}

function assertRefused(config: Json, error: string): void {
  for (const version of [2, 3]) {
    assert.throws(
      () => loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(config), bootstrapVersion: version, allowUnknownStaticFields: false }),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        assert.equal(e.message, `--config-yaml: ${error}`);
        return true;
      },
      `v${version}`,
    );
  }
}

/** An aggregate cluster over `clusters`, with what Envoy requires of one. */
const aggregate = (clusters: string[], fields: Json = {}): Json => ({
  cluster_type: { name: 'envoy.clusters.aggregate', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.clusters.aggregate.v3.ClusterConfig', clusters } },
  lb_policy: 'CLUSTER_PROVIDED',
  load_assignment: undefined,
  ...fields,
});
const subset = (selector: Json): Json => ({ lb_subset_config: { subset_selectors: [{ keys: ['a', 'b'], fallback_policy: 'KEYS_SUBSET', ...selector }] } });
const SELECTOR = `${CLUSTER}.lb_subset_config.subset_selectors[0].fallback_keys_subset`;
const RATE = `${CLUSTER}.dns_failure_refresh_rate`;
const HC = `${CLUSTER}.health_checks[0]`;
const TCP_CHECK = { timeout: '1s', interval: '1s', unhealthy_threshold: 2, healthy_threshold: 2, tcp_health_check: {} };

const CASES: readonly (readonly [string, Json, string])[] = [
  ['one-of: type and cluster_type', { type: 'STATIC', cluster_type: { name: 'envoy.clusters.aggregate' } }, `${CLUSTER}: only one of type, cluster_type may be set`],
  [
    'one-of: zone_aware_lb_config and locality_weighted_lb_config',
    { common_lb_config: { zone_aware_lb_config: {}, locality_weighted_lb_config: {} } },
    `${CLUSTER}.common_lb_config: only one of zone_aware_lb_config, locality_weighted_lb_config may be set`,
  ],
  ['one-of: ring_hash and least_request lb configs', { lb_policy: 'RING_HASH', ring_hash_lb_config: {}, least_request_lb_config: {} }, `${CLUSTER}: only one of ring_hash_lb_config, least_request_lb_config may be set`],
  ['one-of: original_dst and least_request lb configs', { original_dst_lb_config: {}, least_request_lb_config: {} }, `${CLUSTER}: only one of original_dst_lb_config, least_request_lb_config may be set`],
  ['ring_hash_lb_config without RING_HASH', { lb_policy: 'LEAST_REQUEST', ring_hash_lb_config: {} }, `${CLUSTER}.ring_hash_lb_config: requires lb_policy RING_HASH, but lb_policy is LEAST_REQUEST`],
  ['maglev table_size not prime', { lb_policy: 'MAGLEV', maglev_lb_config: { table_size: 65536 } }, `${CLUSTER}.maglev_lb_config.table_size: The table size of maglev must be prime number`],
  [
    'use_hostname_for_hashing outside STRICT_DNS',
    { lb_policy: 'RING_HASH', common_lb_config: { consistent_hashing_lb_config: { use_hostname_for_hashing: true } } },
    `${CLUSTER}.common_lb_config.consistent_hashing_lb_config.use_hostname_for_hashing: use_hostname_for_hashing is only valid for STRICT_DNS clusters, but type is STATIC`,
  ],
  ['least_request_lb_config without LEAST_REQUEST', { least_request_lb_config: { choice_count: 3 } }, `${CLUSTER}.least_request_lb_config: requires lb_policy LEAST_REQUEST, but lb_policy is ROUND_ROBIN`],
  ['outlier max_ejection_percent over 100', { outlier_detection: { max_ejection_percent: 101 } }, `${CLUSTER}.outlier_detection.max_ejection_percent: value must be less than or equal to 100`],
  [
    'outlier enforcing percentage over 100',
    { outlier_detection: { enforcing_failure_percentage_local_origin: 200 } },
    `${CLUSTER}.outlier_detection.enforcing_failure_percentage_local_origin: value must be less than or equal to 100`,
  ],
  ['outlier interval zero', { outlier_detection: { interval: '0s' } }, `${CLUSTER}.outlier_detection.interval: value must be greater than 0s`],
  ['RefreshRate base_interval zero', { type: 'STRICT_DNS', dns_failure_refresh_rate: { base_interval: '0s' } }, `${RATE}.base_interval: value must be greater than 1ms`],
  ['RefreshRate base_interval missing', { type: 'STRICT_DNS', dns_failure_refresh_rate: { max_interval: '1s' } }, `${RATE}.base_interval: value is required`],
  ['RefreshRate base_interval equal to max_interval', { type: 'STRICT_DNS', dns_failure_refresh_rate: { base_interval: '2s', max_interval: '2s' } }, `${RATE}.base_interval: must be less than max_interval`],
  ['RefreshRate max_interval below base_interval', { type: 'STRICT_DNS', dns_failure_refresh_rate: { base_interval: '2s', max_interval: '1s' } }, `${RATE}.max_interval: must be greater than or equal to base_interval`],
  ['dns_refresh_rate below 1 ms', { type: 'STRICT_DNS', dns_refresh_rate: '0.000999s' }, `${CLUSTER}.dns_refresh_rate: value must be greater than or equal to 1ms`],
  [
    'endpoint_stale_after outside EDS',
    { load_assignment: { ...(assignment('10.0.0.1') as object), policy: { endpoint_stale_after: '5s' } } },
    `${CLUSTER}.load_assignment.policy.endpoint_stale_after: endpoint_stale_after applies to EDS assignments only: a STATIC cluster's load_assignment never goes stale (it would be ignored)`,
  ],
  [
    'drop_overloads with two categories',
    { load_assignment: { ...(assignment('10.0.0.1') as object), policy: { drop_overloads: [{ category: 'a' }, { category: 'b' }] } } },
    `${CLUSTER}.load_assignment.policy.drop_overloads: Cluster drop_overloads config has 2 categories. Only one is supported, as in Envoy.`,
  ],
  ['fallback_keys_subset empty with KEYS_SUBSET', subset({}), `${SELECTOR}: fallback_keys_subset cannot be empty`],
  ['fallback_keys_subset equal to keys', subset({ fallback_keys_subset: ['b', 'a'] }), `${SELECTOR}: fallback_keys_subset cannot be equal to keys`],
  ['fallback_keys_subset with another fallback_policy', subset({ fallback_policy: 'ANY_ENDPOINT', fallback_keys_subset: ['a'] }), `${SELECTOR}: fallback_keys_subset can be set only for KEYS_SUBSET fallback_policy`],
  ['fallback_keys_subset without a fallback_policy', subset({ fallback_policy: undefined, fallback_keys_subset: ['a'] }), `${SELECTOR}: fallback_keys_subset can be set only for KEYS_SUBSET fallback_policy`],
  ['fallback_keys_subset with a value not in keys', subset({ fallback_keys_subset: ['a', 'c'] }), `${SELECTOR}: fallback_keys_subset must be a subset of selector keys`],
  [
    'minimum_ring_size above maximum_ring_size',
    { lb_policy: 'RING_HASH', ring_hash_lb_config: { minimum_ring_size: 2048, maximum_ring_size: 1024 } },
    `${CLUSTER}.ring_hash_lb_config.minimum_ring_size: ring hash: minimum_ring_size (2048) > maximum_ring_size (1024)`,
  ],
  [
    'maximum_ring_size below the default minimum',
    { lb_policy: 'RING_HASH', ring_hash_lb_config: { maximum_ring_size: 512 } },
    `${CLUSTER}.ring_hash_lb_config.minimum_ring_size: ring hash: minimum_ring_size (1024) > maximum_ring_size (512)`,
  ],
  [
    'LOGICAL_DNS with two endpoints',
    { type: 'LOGICAL_DNS', load_assignment: assignment('a.internal', 'b.internal') },
    `${CLUSTER}.load_assignment: LOGICAL_DNS clusters must have a single locality_lb_endpoint and a single lb_endpoint`,
  ],
  ['LOGICAL_DNS without endpoints', { type: 'LOGICAL_DNS', load_assignment: undefined }, `${CLUSTER}.load_assignment: LOGICAL_DNS clusters must have a single locality_lb_endpoint and a single lb_endpoint`],
  ['STATIC with a hostname', { load_assignment: assignment('backend.internal') }, `${CLUSTER}.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address: malformed IP address: backend.internal`],
  ['STATIC without members', { load_assignment: undefined }, `${CLUSTER}.load_assignment: a STATIC cluster needs a load_assignment (or hosts)`],
  ['ORIGINAL_DST with members', { type: 'ORIGINAL_DST', lb_policy: 'CLUSTER_PROVIDED' }, `${CLUSTER}.load_assignment: ORIGINAL_DST clusters must have no load assignment or hosts configured`],
  [
    'ORIGINAL_DST with another lb_policy',
    { type: 'ORIGINAL_DST', load_assignment: undefined, lb_policy: 'RING_HASH' },
    `${CLUSTER}.lb_policy: cluster: LB policy RING_HASH is not valid for Cluster type ORIGINAL_DST. Only 'CLUSTER_PROVIDED' or 'ORIGINAL_DST_LB' is allowed with cluster type 'ORIGINAL_DST'`,
  ],
  [
    'ORIGINAL_DST with the default lb_policy',
    { type: 'ORIGINAL_DST', load_assignment: undefined },
    `${CLUSTER}.lb_policy: cluster: LB policy ROUND_ROBIN is not valid for Cluster type ORIGINAL_DST. Only 'CLUSTER_PROVIDED' or 'ORIGINAL_DST_LB' is allowed with cluster type 'ORIGINAL_DST'`,
  ],
  [
    'CLUSTER_PROVIDED on a type that provides no balancer',
    { lb_policy: 'CLUSTER_PROVIDED' },
    `${CLUSTER}.lb_policy: cluster manager: cluster provided LB specified but cluster 'c' did not provide one. Check cluster documentation.`,
  ],
  ['original_dst_lb_config without CLUSTER_PROVIDED', { original_dst_lb_config: { use_http_header: true } }, `${CLUSTER}.original_dst_lb_config: requires lb_policy CLUSTER_PROVIDED, but lb_policy is ROUND_ROBIN`],
  ['EDS without eds_cluster_config', { type: 'EDS', load_assignment: undefined }, `${CLUSTER}.eds_cluster_config: cannot create an EDS cluster without an EDS config`],
  ['EDS with members', { type: 'EDS', eds_cluster_config: { eds_config: { path: '/etc/proxy/eds.yaml' } } }, `${CLUSTER}.load_assignment: an EDS cluster takes its endpoints from EDS: load_assignment (or hosts) would be ignored`],
  ['eds_cluster_config on a STRICT_DNS cluster', { type: 'STRICT_DNS', eds_cluster_config: { service_name: 's' } }, `${CLUSTER}.eds_cluster_config: eds_cluster_config set in a non-EDS cluster`],
  ['an unknown cluster_type', { cluster_type: { name: 'envoy.clusters.nope' } }, `${CLUSTER}.cluster_type.name: Didn't find a registered cluster factory implementation for name: 'envoy.clusters.nope' (known: proxy.clusters.aggregate)`],
  [
    'a cluster type of Envoy 1.16 this build lacks',
    { cluster_type: { name: 'envoy.clusters.dynamic_forward_proxy' }, load_assignment: undefined },
    `${CLUSTER}.cluster_type.name: Didn't find a registered cluster factory implementation for name: 'envoy.clusters.dynamic_forward_proxy' (known: proxy.clusters.aggregate)`,
  ],
  ['aggregate without CLUSTER_PROVIDED', aggregate(['a'], { lb_policy: 'ROUND_ROBIN' }), `${CLUSTER}.lb_policy: cluster manager: cluster provided LB not specified but cluster 'c' provided one. Check cluster documentation.`],
  ['aggregate with an empty cluster list', aggregate([]), `${CLUSTER}.cluster_type.typed_config.clusters: value must contain at least 1 item(s)`],
  [
    'aggregate without typed_config',
    { cluster_type: { name: 'envoy.clusters.aggregate' }, lb_policy: 'CLUSTER_PROVIDED', load_assignment: undefined },
    `${CLUSTER}.cluster_type.typed_config: missing: proxy.clusters.aggregate takes a envoy.extensions.clusters.aggregate.v3.ClusterConfig`,
  ],
  [
    'aggregate with another typed_config',
    { cluster_type: { name: 'envoy.clusters.aggregate', typed_config: { '@type': 'type.googleapis.com/google.protobuf.Struct', value: { clusters: ['a'] } } }, lb_policy: 'CLUSTER_PROVIDED', load_assignment: undefined },
    `${CLUSTER}.cluster_type.typed_config.@type: proxy.clusters.aggregate takes a envoy.extensions.clusters.aggregate.v3.ClusterConfig, not google.protobuf.Struct`,
  ],
  ['aggregate with a load_assignment', aggregate(['a'], { load_assignment: assignment('10.0.0.1') }), `${CLUSTER}.load_assignment: a proxy.clusters.aggregate cluster has no hosts of its own: load_assignment (or hosts) would be ignored`],
  ['a negative idle_timeout', { common_http_protocol_options: { idle_timeout: '-1s' } }, `${CLUSTER}.common_http_protocol_options.idle_timeout: must not be negative, got -1s`],
  ['a negative max_connection_duration', { common_http_protocol_options: { max_connection_duration: '-2s' } }, `${CLUSTER}.common_http_protocol_options.max_connection_duration: must not be negative, got -2s`],
  ['a negative max_stream_duration', { common_http_protocol_options: { max_stream_duration: '-0.500s' } }, `${CLUSTER}.common_http_protocol_options.max_stream_duration: must not be negative, got -0.500s`],
  ['max_headers_count 0', { common_http_protocol_options: { max_headers_count: 0 } }, `${CLUSTER}.common_http_protocol_options.max_headers_count: value must be greater than or equal to 1`],
  ['a hostname as DNS resolver', { type: 'STRICT_DNS', dns_resolvers: [address('dns.internal', 53)] }, `${CLUSTER}.dns_resolvers[0].socket_address.address: malformed IP address: dns.internal`],
  ['lb_subset_config with CLUSTER_PROVIDED', { type: 'ORIGINAL_DST', load_assignment: undefined, lb_policy: 'CLUSTER_PROVIDED', lb_subset_config: {} }, `${CLUSTER}.lb_subset_config: cluster: LB policy CLUSTER_PROVIDED cannot be combined with lb_subset_config`],
  [
    'locality_weight_aware without locality_weighted_lb_config',
    { lb_subset_config: { locality_weight_aware: true } },
    `${CLUSTER}.lb_subset_config.locality_weight_aware: Locality weight aware subset LB requires that a locality_weighted_lb_config be set in c`,
  ],
  [
    'HTTP/1 and HTTP/2 options with the configured protocol',
    { http_protocol_options: {}, http2_protocol_options: {} },
    `${CLUSTER}.http2_protocol_options: cluster: Both HTTP1 and HTTP2 options may only be configured with non-default 'protocol_selection' values`,
  ],
  ['health check: timeout above 0', { health_checks: [{ ...TCP_CHECK, timeout: '0s' }] }, `${HC}.timeout: value must be greater than 0s`],
  ['health check: interval required', { health_checks: [{ ...TCP_CHECK, interval: undefined }] }, `${HC}.interval: value is required`],
  ['health check: healthy_threshold required', { health_checks: [{ ...TCP_CHECK, healthy_threshold: undefined }] }, `${HC}.healthy_threshold: value is required`],
  ['health check: a checker required', { health_checks: [{ ...TCP_CHECK, tcp_health_check: undefined }] }, `${HC}.health_checker: is required: set one of http_health_check, tcp_health_check, grpc_health_check, custom_health_check`],
  ['health check: edge intervals above 0', { health_checks: [{ ...TCP_CHECK, unhealthy_edge_interval: '0s' }] }, `${HC}.unhealthy_edge_interval: value must be greater than 0s`],
  ['health check: one at most', { health_checks: [TCP_CHECK, TCP_CHECK] }, `${CLUSTER}.health_checks: Multiple health checks not supported`],
  ['health check: an HTTP path', { health_checks: [{ ...TCP_CHECK, tcp_health_check: undefined, http_health_check: { host: 'h' } }] }, `${HC}.http_health_check.path: value length must be at least 1 runes`],
  [
    'health check: expected statuses within 100..600',
    { health_checks: [{ ...TCP_CHECK, tcp_health_check: undefined, http_health_check: { path: '/', expected_statuses: [{ start: 200, end: 300 }, { start: 500, end: 601 }] } }] },
    `${HC}.http_health_check.expected_statuses[1]: Invalid http status range: expecting end <= 600, but found end=601`,
  ],
  [
    'health check: expected statuses start below end',
    { health_checks: [{ ...TCP_CHECK, tcp_health_check: undefined, http_health_check: { path: '/', expected_statuses: [{ start: 300, end: 300 }] } }] },
    `${HC}.http_health_check.expected_statuses[0]: Invalid http status range: expecting start < end, but found start=300 and end=300`,
  ],
  [
    'health check: the host header stays',
    { health_checks: [{ ...TCP_CHECK, tcp_health_check: undefined, http_health_check: { path: '/', request_headers_to_remove: ['x-a', 'Host'] } }] },
    `${HC}.http_health_check.request_headers_to_remove[1]: :-prefixed or host headers may not be removed`,
  ],
  [
    'health check: header formatters are refused',
    { health_checks: [{ ...TCP_CHECK, tcp_health_check: undefined, http_health_check: { path: '/', request_headers_to_add: [{ header: { key: 'x-a', value: '%START_TIME%' } }] } }] },
    `${HC}.http_health_check.request_headers_to_add[0].header.value: header value formatters (%...%) are not implemented by this build yet`,
  ],
  [
    'health check: a service name regex that compiles',
    { health_checks: [{ ...TCP_CHECK, tcp_health_check: undefined, http_health_check: { path: '/', service_name_matcher: { safe_regex: { google_re2: {}, regex: 'a(' } } } }] },
    `${HC}.http_health_check.service_name_matcher.safe_regex.regex: invalid regex 'a(': missing closing )`,
  ],
  ['health check: hex payloads', { health_checks: [{ ...TCP_CHECK, tcp_health_check: { send: { text: '0a' }, receive: [{ text: 'abc' }] } }] }, `${HC}.tcp_health_check.receive[0].text: invalid hex string 'abc'`],
];

for (const [name, fields, error] of CASES) {
  test(`cluster rule: ${name}`, () => assertRefused(bootstrap(fields), error));
}

test('cluster rule: names are unique across clusters', () => {
  const second = { name: 'c', connect_timeout: '1s', load_assignment: assignment('10.0.0.2') };
  assertRefused(bootstrap({}, [second]), "static_resources.clusters[1].name: cluster manager: duplicate cluster 'c'");
});

test('cluster rule: dns_refresh_rate of exactly 1 ms is accepted (the spec: at least 1ms; Envoy refuses it)', () => {
  for (const version of [2, 3]) {
    const config = bootstrap({ type: 'STRICT_DNS', load_assignment: assignment('backend.internal'), dns_refresh_rate: '0.001s' });
    const loaded = loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(config), bootstrapVersion: version, allowUnknownStaticFields: false });
    assert.equal(loaded.bootstrap.clusters[0]!.dnsRefreshRateMs, 1, `v${version}`);
  }
});

test('load_assignment.policy loads into the model, v2 and v3: overprovisioning_factor, drop_overloads; Envoy defaults when unset', () => {
  const policy = { overprovisioning_factor: 200, drop_overloads: [{ category: 'throttle', drop_percentage: { numerator: 25, denominator: 'TEN_THOUSAND' } }] };
  for (const version of [2, 3]) {
    const load = (fields: Json) => loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap(fields)), bootstrapVersion: version, allowUnknownStaticFields: false });
    const loaded = load({ load_assignment: { ...(assignment('10.0.0.1') as object), policy } });
    assert.deepEqual(loaded.bootstrap.clusters[0]!.loadAssignment.policy, {
      overprovisioningFactor: 200,
      dropOverload: { numerator: 25, denominator: 'TEN_THOUSAND' },
      endpointStaleAfterMs: null,
    });
    assert.deepEqual(load({}).bootstrap.clusters[0]!.loadAssignment.policy, { overprovisioningFactor: 140, dropOverload: null, endpointStaleAfterMs: null });
  }
});

test('cluster rules pass what they allow: both HTTP options with USE_DOWNSTREAM_PROTOCOL, a RefreshRate with max just above base, one LOGICAL_DNS host', () => {
  for (const fields of [
    { http_protocol_options: {}, http2_protocol_options: {}, protocol_selection: 'USE_DOWNSTREAM_PROTOCOL' },
    { type: 'STRICT_DNS', dns_failure_refresh_rate: { base_interval: '1s', max_interval: '1.001s' }, dns_refresh_rate: '0.002s' },
    { type: 'LOGICAL_DNS', load_assignment: assignment('backend.internal') },
    { lb_policy: 'RING_HASH', ring_hash_lb_config: { minimum_ring_size: 64, maximum_ring_size: 64 } },
    aggregate(['a', 'not-yet-defined']),
    subset({ fallback_keys_subset: ['a'] }),
  ]) {
    assert.doesNotThrow(() => loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap(fields)), allowUnknownStaticFields: false }), JSON.stringify(fields));
  }
});

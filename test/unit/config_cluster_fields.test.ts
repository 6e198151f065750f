// Every field of the spec's Cluster table through the loader (v2 upgrade, decoding, validation,
// model), written the v2 way and the v3 way; and, for the fields this build does not act on yet,
// the capability check (loading's last stage) refusing it by field path. docs/clusters.md points at these tests.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, ConfigErrors } from '../../src/config/errors';
import { loadBootstrap, LoadedBootstrap } from '../../src/config/load';
import type { ClusterConfig } from '../../src/config/model';
import type { Json } from '../helpers/config_fixtures';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const CLUSTER = 'static_resources.clusters[0]';
const TLS_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';
/** A CommonTlsContext with nothing set: Envoy's defaults. */
const EMPTY_COMMON = {
  tlsParams: { minimumProtocolVersion: 'TLS_AUTO', maximumProtocolVersion: 'TLS_AUTO', cipherSuites: [], ecdhCurves: [] },
  tlsCertificates: [],
  tlsCertificateSdsSecretConfigs: [],
  validationContext: null,
  validationContextSdsSecretConfig: null,
  alpnProtocols: [],
};
const STRUCT_TYPE = 'type.googleapis.com/google.protobuf.Struct';
const AGGREGATE_TYPE = 'type.googleapis.com/envoy.extensions.clusters.aggregate.v3.ClusterConfig';
const AGGREGATE_V2_TYPE = 'type.googleapis.com/envoy.config.cluster.aggregate.v2alpha.ClusterConfig';

const address = (host: string, port: number): Json => ({ socket_address: { address: host, port_value: port } });
const assignment = (...hosts: string[]): Json => ({
  cluster_name: 'c',
  endpoints: [{ lb_endpoints: hosts.map((host) => ({ endpoint: { address: address(host, 80) } })) }],
});

/** A STATIC cluster with one endpoint, plus `fields`; `undefined` removes a base field. */
function bootstrap(fields: Json): Json {
  const cluster = Object.fromEntries(
    Object.entries({ name: 'c', connect_timeout: '1s', load_assignment: assignment('10.0.0.1'), ...fields }).filter(([, v]) => v !== undefined),
  );
  return { static_resources: { clusters: [cluster] } };
}

type Version = 2 | 3;

function load(fields: Json, version: Version): LoadedBootstrap {
  return loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap(fields)), bootstrapVersion: version, allowUnknownStaticFields: false });
}

/** What loading refuses, as ConfigErrors; the loaded bootstrap when it loads. */
function refusals(load: () => LoadedBootstrap): readonly ConfigError[] | LoadedBootstrap {
  try {
    return load();
  } catch (e) {
    const all = e instanceof ConfigErrors ? e.all : e instanceof ConfigError ? [e] : [];
    if (all.length === 0) throw e;
    return all;
  }
}

/** The model, or the paths (under the cluster) that the capability check, a stage of loading, refuses. */
function loadOrRefused(fields: Json, version: Version): { readonly loaded: LoadedBootstrap | null; readonly refused: string[] } {
  const result = refusals(() => load(fields, version));
  if (!Array.isArray(result)) return { loaded: result as LoadedBootstrap, refused: [] };
  for (const f of result) assert.match(f.reason, /\(it would be ignored\)$|^Didn't find a registered network or http filter/);
  return { loaded: null, refused: result.map((f) => f.fieldPath.slice(CLUSTER.length + 1)) };
}

interface Row {
  /** The spec's field name (the test's name). */
  readonly field: string;
  readonly v3: Json;
  /** The v2 spelling, when it differs; `null`: the field has no v2 form. */
  readonly v2?: Json | null;
  /** What the model holds; absent for a refused field, which leaves no model. */
  readonly expect?: (cluster: ClusterConfig, version: Version, loaded: LoadedBootstrap) => void;
  /** Paths the capability check refuses; none: accepted. */
  readonly refused?: readonly string[];
  /** v3 refuses the v2-only spelling as an unknown field: the field's v3 form is another one. */
  readonly v3Unknown?: string;
}

const ROWS: readonly Row[] = [
  { field: 'name', v3: { name: 'svc:a', load_assignment: { ...assignment('10.0.0.1'), cluster_name: 'svc:a' } }, expect: (c) => (assert.equal(c.name, 'svc:a'), assert.equal(c.statName, 'svc_a')) },
  { field: 'alt_stat_name', v3: { alt_stat_name: 'alt:name' }, expect: (c) => assert.equal(c.statName, 'alt_name') },
  { field: 'type', v3: { type: 'STRICT_DNS', load_assignment: assignment('backend.internal', 'other.internal') }, expect: (c) => assert.equal(c.type, 'STRICT_DNS') },
  {
    field: 'cluster_type',
    v3: { cluster_type: { name: 'envoy.clusters.aggregate', typed_config: { '@type': AGGREGATE_TYPE, clusters: ['a', 'b'] } }, lb_policy: 'CLUSTER_PROVIDED', load_assignment: undefined },
    v2: { cluster_type: { name: 'envoy.clusters.aggregate', typed_config: { '@type': AGGREGATE_V2_TYPE, clusters: ['a', 'b'] } }, lb_policy: 'CLUSTER_PROVIDED', load_assignment: undefined },
    expect: (c) => assert.deepEqual(c.clusterType, { name: 'proxy.clusters.aggregate', typedConfig: { '@type': AGGREGATE_TYPE, clusters: ['a', 'b'] } }),
  },
  {
    field: 'eds_cluster_config',
    v3: { type: 'EDS', load_assignment: undefined, eds_cluster_config: { eds_config: { path: '/etc/proxy/eds.yaml' }, service_name: 'svc' } },
    expect: (c) =>
      assert.deepEqual(c.edsClusterConfig, {
        edsConfig: { kind: 'path', path: '/etc/proxy/eds.yaml', initialFetchTimeoutMs: 15000, resourceApiVersion: 'AUTO' },
        serviceName: 'svc',
      }),
  },
  {
    field: 'eds_cluster_config without service_name',
    v3: { type: 'EDS', load_assignment: undefined, eds_cluster_config: { eds_config: { path: '/etc/proxy/eds.yaml', initial_fetch_timeout: '2s' } } },
    expect: (c) => {
      assert.equal(c.edsClusterConfig?.serviceName, c.name);
      assert.equal(c.edsClusterConfig?.edsConfig.initialFetchTimeoutMs, 2000);
    },
  },
  {
    field: 'eds_cluster_config from a management server',
    v3: {
      type: 'EDS',
      load_assignment: undefined,
      eds_cluster_config: { eds_config: { api_config_source: { api_type: 'GRPC', grpc_services: [{ google_grpc: { target_uri: '127.0.0.1:5678', stat_prefix: 'xds' } }] } } },
    },
    expect: (c) => assert.equal(c.edsClusterConfig?.edsConfig.kind, 'api'),
  },
  { field: 'connect_timeout', v3: { connect_timeout: '0.25s' }, expect: (c) => assert.equal(c.connectTimeoutMs, 250) },
  { field: 'per_connection_buffer_limit_bytes', v3: { per_connection_buffer_limit_bytes: 32768 }, expect: (c) => assert.equal(c.perConnectionBufferLimitBytes, 32768) },
  { field: 'lb_policy', v3: { lb_policy: 'RANDOM' }, expect: (c) => assert.equal(c.lbPolicy, 'RANDOM') },
  { field: 'lb_policy LEAST_REQUEST', v3: { lb_policy: 'LEAST_REQUEST' }, expect: (c) => assert.equal(c.lbPolicy, 'LEAST_REQUEST') },
  {
    // Every policy of the load balancer registry loads.
    field: 'lb_policy MAGLEV',
    v3: { lb_policy: 'MAGLEV' },
    expect: (c) => assert.equal(c.lbPolicy, 'MAGLEV'),
    refused: [],
  },
  {
    // v2's ORIGINAL_DST_LB is v3's CLUSTER_PROVIDED (Envoy builds the same balancer for both).
    field: 'lb_policy ORIGINAL_DST_LB (deprecated)',
    v2: { type: 'ORIGINAL_DST', lb_policy: 'ORIGINAL_DST_LB', load_assignment: undefined },
    v3: { type: 'ORIGINAL_DST', lb_policy: 'CLUSTER_PROVIDED', load_assignment: undefined },
    expect: (c, version, loaded) => {
      assert.equal(c.lbPolicy, 'CLUSTER_PROVIDED');
      if (version === 2) assert.ok(loaded.warnings.includes(`${CLUSTER}.lb_policy: ORIGINAL_DST_LB is deprecated, use CLUSTER_PROVIDED instead`), loaded.warnings.join());
    },
  },
  {
    field: 'hosts',
    v2: { load_assignment: undefined, hosts: [address('10.0.0.2', 81)] },
    v3: { load_assignment: undefined, hosts: [address('10.0.0.2', 81)] },
    v3Unknown: 'hosts',
    expect: (c, _version, loaded) => {
      assert.deepEqual(c.loadAssignment.endpoints.map((e) => e.lbEndpoints.map((l) => l.address)), [[{ address: '10.0.0.2', port: 81 }]]);
      assert.equal(c.loadAssignment.clusterName, 'c');
      assert.ok(loaded.warnings.includes(`${CLUSTER}.hosts: deprecated option, use load_assignment instead`));
      assert.equal((c.source as Json).hosts, undefined);
    },
  },
  {
    field: 'load_assignment',
    v3: { load_assignment: { cluster_name: 'c', endpoints: [{ lb_endpoints: [{ endpoint: { address: address('10.0.0.3', 82) } }] }, { priority: 1, lb_endpoints: [{ endpoint: { address: address('10.0.0.4', 82) } }] }] } },
    expect: (c) => assert.deepEqual(c.loadAssignment.endpoints.map((e) => [e.priority, e.lbEndpoints[0]!.address.address]), [[0, '10.0.0.3'], [1, '10.0.0.4']]),
  },
  {
    field: 'health_checks',
    v3: { health_checks: [{ timeout: '1s', interval: '2s', unhealthy_threshold: 2, healthy_threshold: 1, http_health_check: { path: '/hc' } }] },
    expect: (c) =>
      assert.deepEqual(c.healthChecks, [
        {
          timeoutMs: 1000,
          intervalMs: 2000,
          initialJitterMs: 0,
          intervalJitterMs: 0,
          intervalJitterPercent: 0,
          unhealthyThreshold: 2,
          healthyThreshold: 1,
          noTrafficIntervalMs: 60_000,
          unhealthyIntervalMs: 2000,
          unhealthyEdgeIntervalMs: 2000,
          healthyEdgeIntervalMs: 2000,
          reuseConnection: true,
          transportSocketMatchCriteria: null,
          eventLogPath: '',
          alwaysLogHealthCheckFailures: false,
          checker: { kind: 'http', host: '', path: '/hc', expectedStatuses: [[200, 201]], requestHeadersToAdd: [], requestHeadersToRemove: [], serviceNameMatcher: null },
        },
      ]),
  },
  { field: 'max_requests_per_connection', v3: { max_requests_per_connection: 1 }, expect: (c) => assert.equal(c.maxRequestsPerConnection, 1) },
  {
    field: 'circuit_breakers',
    v3: { circuit_breakers: { thresholds: [{ priority: 'HIGH', max_connections: 10 }] } },
    expect: (c) => {
      assert.equal(c.circuitBreakers.HIGH.maxConnections, 10);
      assert.equal(c.circuitBreakers.HIGH.maxRequests, 1024);
      assert.equal(c.circuitBreakers.DEFAULT.maxConnections, 1024);
      assert.equal(c.circuitBreakers.DEFAULT.maxRetries, 3);
    },
    refused: [],
  },
  {
    field: 'tls_context',
    v2: { tls_context: { sni: 'backend.internal' } },
    v3: { tls_context: { sni: 'backend.internal' } },
    v3Unknown: 'tls_context',
    expect: (c, _version, loaded) => {
      assert.deepEqual(c.transportSocket, { kind: 'tls', context: { common: EMPTY_COMMON, sni: 'backend.internal', allowRenegotiation: false, maxSessionKeys: 1 } });
      assert.ok(loaded.warnings.some((w) => w.startsWith(`${CLUSTER}.tls_context: deprecated option`)));
      // /config_dump prints the source: the v3 rewrite.
      assert.deepEqual((c.source as Json).transport_socket, { name: 'proxy.transport_sockets.tls', typed_config: { '@type': TLS_TYPE, sni: 'backend.internal' } });
      assert.equal((c.source as Json).tls_context, undefined);
    },
  },
  {
    field: 'upstream_http_protocol_options',
    v3: { upstream_http_protocol_options: { auto_sni: true } },
    expect: (c) => assert.deepEqual(c.upstreamHttpProtocolOptions, { autoSni: true, autoSanValidation: false }),
  },
  {
    field: 'common_http_protocol_options',
    v3: { common_http_protocol_options: { idle_timeout: '30s', max_connection_duration: '60s', max_headers_count: 50, max_stream_duration: '5s' } },
    expect: (c) =>
      assert.deepEqual(c.commonHttpProtocolOptions, {
        idleTimeoutMs: 30000,
        maxConnectionDurationMs: 60000,
        maxHeadersCount: 50,
        maxStreamDurationMs: 5000,
        headersWithUnderscoresAction: 'ALLOW',
      }),
    refused: [],
  },
  {
    // Envoy ignores it upstream: refused by path with the reason.
    field: 'common_http_protocol_options.headers_with_underscores_action',
    v3: { common_http_protocol_options: { headers_with_underscores_action: 'REJECT_REQUEST' } },
    refused: ['common_http_protocol_options.headers_with_underscores_action'],
  },
  {
    field: 'http_protocol_options',
    v3: { http_protocol_options: { header_key_format: { proper_case_words: {} } } },
    expect: (c) => assert.deepEqual(c.httpProtocolOptions, { acceptHttp10: false, defaultHostForHttp10: '', headerKeyFormat: 'proper_case_words', enableTrailers: false }),
    refused: [],
  },
  {
    // Server-side options: Envoy ignores them on a cluster.
    field: 'http_protocol_options.accept_http_10',
    v3: { http_protocol_options: { accept_http_10: true, default_host_for_http_10: 'example.com' } },
    refused: ['http_protocol_options.accept_http_10', 'http_protocol_options.default_host_for_http_10'],
  },
  {
    // Set, even empty, is what says the upstream speaks HTTP/2.
    field: 'http2_protocol_options',
    v3: { http2_protocol_options: { max_concurrent_streams: 7, hpack_table_size: 0 } },
    expect: (c) =>
      assert.deepEqual(c.http2ProtocolOptions, { maxConcurrentStreams: 7, initialStreamWindowSize: 268435456, initialConnectionWindowSize: 268435456, hpackTableSize: 0 }),
    refused: [],
  },
  {
    field: 'typed_extension_protocol_options',
    v3: { typed_extension_protocol_options: { 'envoy.filters.network.thrift_proxy': { '@type': STRUCT_TYPE, value: { a: 1 } } } },
    refused: ['typed_extension_protocol_options["envoy.filters.network.thrift_proxy"]'],
  },
  {
    // The v2 Struct form is typed by the upgrade, then refused as the typed form is.
    field: 'extension_protocol_options',
    v2: { extension_protocol_options: { 'envoy.filters.network.thrift_proxy': { transport: 'FRAMED' } } },
    v3: { extension_protocol_options: { 'envoy.filters.network.thrift_proxy': { transport: 'FRAMED' } } },
    v3Unknown: 'extension_protocol_options',
    refused: ['typed_extension_protocol_options["envoy.filters.network.thrift_proxy"]'],
  },
  { field: 'dns_refresh_rate', v3: { type: 'STRICT_DNS', dns_refresh_rate: '2.5s' }, expect: (c) => assert.equal(c.dnsRefreshRateMs, 2500) },
  {
    field: 'dns_failure_refresh_rate',
    v3: { type: 'LOGICAL_DNS', dns_failure_refresh_rate: { base_interval: '1s' } },
    expect: (c) => assert.deepEqual(c.dnsFailureRefreshRate, { baseMs: 1000, maxMs: 10000 }),
  },
  {
    field: 'dns_failure_refresh_rate (max_interval)',
    v3: { type: 'STRICT_DNS', dns_failure_refresh_rate: { base_interval: '0.5s', max_interval: '3s' } },
    expect: (c) => assert.deepEqual(c.dnsFailureRefreshRate, { baseMs: 500, maxMs: 3000 }),
  },
  { field: 'respect_dns_ttl', v3: { type: 'STRICT_DNS', respect_dns_ttl: true }, expect: (c) => assert.equal(c.respectDnsTtl, true) },
  { field: 'dns_lookup_family', v3: { type: 'STRICT_DNS', dns_lookup_family: 'V4_ONLY' }, expect: (c) => assert.equal(c.dnsLookupFamily, 'V4_ONLY') },
  {
    field: 'dns_resolvers',
    v3: { type: 'STRICT_DNS', dns_resolvers: [address('10.0.0.53', 53), address('::1', 5353)] },
    expect: (c) => assert.deepEqual(c.dnsResolvers, [{ address: '10.0.0.53', port: 53 }, { address: '::1', port: 5353 }]),
  },
  { field: 'use_tcp_for_dns_lookups', v3: { type: 'STRICT_DNS', use_tcp_for_dns_lookups: true }, expect: (c) => assert.equal(c.useTcpForDnsLookups, true) },
  {
    field: 'outlier_detection',
    v3: { outlier_detection: { consecutive_5xx: 3, interval: '5s', enforcing_failure_percentage: 40, split_external_local_origin_errors: true } },
    // Every other field takes Envoy 1.16's default.
    expect: (c) =>
      assert.deepEqual(c.outlierDetection, {
        consecutive5xx: 3,
        consecutiveGatewayFailure: 5,
        consecutiveLocalOriginFailure: 5,
        intervalMs: 5000,
        baseEjectionTimeMs: 30000,
        maxEjectionPercent: 10,
        enforcingConsecutive5xx: 100,
        enforcingConsecutiveGatewayFailure: 0,
        enforcingConsecutiveLocalOriginFailure: 100,
        enforcingSuccessRate: 100,
        enforcingLocalOriginSuccessRate: 100,
        enforcingFailurePercentage: 40,
        enforcingFailurePercentageLocalOrigin: 0,
        successRateMinimumHosts: 5,
        successRateRequestVolume: 100,
        successRateStdevFactor: 1900,
        failurePercentageThreshold: 85,
        failurePercentageMinimumHosts: 5,
        failurePercentageRequestVolume: 50,
        splitExternalLocalOriginErrors: true,
      }),
  },
  { field: 'cleanup_interval', v3: { cleanup_interval: '10s' }, expect: (c) => assert.equal(c.cleanupIntervalMs, 10000) },
  {
    field: 'lb_subset_config',
    v3: {
      lb_subset_config: {
        fallback_policy: 'DEFAULT_SUBSET',
        default_subset: { version: 'v1', build: 7, canary: false, tags: ['a', 1], owner: { team: 'x' }, none: null },
        subset_selectors: [{ keys: ['version', 'stage'], fallback_policy: 'KEYS_SUBSET', fallback_keys_subset: ['version'] }],
        panic_mode_any: true,
        list_as_any: true,
      },
    },
    expect: (c) =>
      assert.deepEqual(c.lbSubsetConfig, {
        fallbackPolicy: 'DEFAULT_SUBSET',
        // The Struct keeps the JSON form of its Values: what endpoint metadata is compared with.
        defaultSubset: { version: 'v1', build: 7, canary: false, tags: ['a', 1], owner: { team: 'x' }, none: null },
        subsetSelectors: [{ keys: ['version', 'stage'], fallbackPolicy: 'KEYS_SUBSET', fallbackKeysSubset: ['version'] }],
        localityWeightAware: false,
        scaleLocalityWeight: false,
        panicModeAny: true,
        listAsAny: true,
      }),
  },
  {
    field: 'lb_subset_config (locality weight aware)',
    v3: { lb_subset_config: { locality_weight_aware: true, scale_locality_weight: true }, common_lb_config: { locality_weighted_lb_config: {} } },
    expect: (c) => {
      assert.equal(c.lbSubsetConfig?.localityWeightAware, true);
      assert.equal(c.lbSubsetConfig?.scaleLocalityWeight, true);
    },
    refused: [],
  },
  {
    // Added in 1.17: not honored by this build, so refused.
    field: 'lb_subset_config (single_host_per_subset)',
    v3: { lb_subset_config: { subset_selectors: [{ keys: ['node'], single_host_per_subset: true }] } },
    refused: ['lb_subset_config.subset_selectors[0].single_host_per_subset'],
  },
  {
    field: 'ring_hash_lb_config',
    v3: { lb_policy: 'RING_HASH', ring_hash_lb_config: { minimum_ring_size: 16, hash_function: 'MURMUR_HASH_2' } },
    expect: (c) => assert.deepEqual(c.ringHashLbConfig, { minimumRingSize: 16, maximumRingSize: 8388608, hashFunction: 'MURMUR_HASH_2' }),
  },
  {
    field: 'original_dst_lb_config',
    v3: { type: 'ORIGINAL_DST', lb_policy: 'CLUSTER_PROVIDED', load_assignment: undefined, original_dst_lb_config: { use_http_header: true } },
    expect: (c) => assert.deepEqual(c.originalDstLbConfig, { useHttpHeader: true }),
  },
  {
    field: 'least_request_lb_config',
    v3: { lb_policy: 'LEAST_REQUEST', least_request_lb_config: { choice_count: 3 } },
    expect: (c) => assert.deepEqual(c.leastRequestLbConfig, { choiceCount: 3, activeRequestBias: null }),
  },
  {
    field: 'least_request_lb_config.active_request_bias',
    v3: { lb_policy: 'LEAST_REQUEST', least_request_lb_config: { active_request_bias: { default_value: 0.5, runtime_key: 'lr.bias' } } },
    expect: (c) => assert.deepEqual(c.leastRequestLbConfig, { choiceCount: 2, activeRequestBias: { defaultValue: 0.5, runtimeKey: 'lr.bias' } }),
  },
  {
    // Read by the round robin balancer; truncated to the whole percent.
    field: 'common_lb_config.healthy_panic_threshold',
    v3: { common_lb_config: { healthy_panic_threshold: { value: 33.9 } } },
    expect: (c) => assert.equal(c.commonLbConfig.healthyPanicThreshold, 33),
  },
  {
    field: 'common_lb_config',
    v3: {
      // use_hostname_for_hashing is for STRICT_DNS clusters only.
      type: 'STRICT_DNS',
      common_lb_config: {
        zone_aware_lb_config: { routing_enabled: { value: 40.5 }, min_cluster_size: 3, fail_traffic_on_panic: true },
        update_merge_window: '0s',
        ignore_new_hosts_until_first_hc: true,
        consistent_hashing_lb_config: { use_hostname_for_hashing: true },
      },
    },
    expect: (c) =>
      assert.deepEqual(c.commonLbConfig, {
        healthyPanicThreshold: 50,
        zoneAware: { routingEnabled: 40, minClusterSize: 3, failTrafficOnPanic: true },
        localityWeighted: false,
        updateMergeWindowMs: 0,
        ignoreNewHostsUntilFirstHc: true,
        useHostnameForHashing: true,
      }),
  },
  {
    field: 'common_lb_config (locality weighted)',
    v3: { common_lb_config: { locality_weighted_lb_config: {} } },
    expect: (c) => assert.equal(c.commonLbConfig.localityWeighted, true),
  },
  {
    field: 'transport_socket',
    v2: { transport_socket: { name: 'tls', typed_config: { '@type': 'type.googleapis.com/envoy.api.v2.auth.UpstreamTlsContext', sni: 's' } } },
    v3: { transport_socket: { name: 'envoy.transport_sockets.tls', typed_config: { '@type': TLS_TYPE, sni: 's' } } },
    expect: (c) => assert.deepEqual(c.transportSocket, { kind: 'tls', context: { common: EMPTY_COMMON, sni: 's', allowRenegotiation: false, maxSessionKeys: 1 } }),
  },
  {
    field: 'protocol_selection',
    v3: { protocol_selection: 'USE_DOWNSTREAM_PROTOCOL' },
    expect: (c) => assert.equal(c.protocolSelection, 'USE_DOWNSTREAM_PROTOCOL'),
    refused: [],
  },
  {
    field: 'close_connections_on_host_health_failure',
    v3: { close_connections_on_host_health_failure: true },
    expect: (c) => assert.equal(c.closeConnectionsOnHostHealthFailure, true),
  },
  {
    // v3 renamed it ignore_health_on_host_removal.
    field: 'drain_connections_on_host_removal',
    v2: { drain_connections_on_host_removal: true },
    v3: { ignore_health_on_host_removal: true },
    expect: (c) => {
      assert.equal(c.drainConnectionsOnHostRemoval, true);
      assert.deepEqual(Object.keys(c.source as Json).filter((k) => k.endsWith('_on_host_removal')), ['ignore_health_on_host_removal']);
    },
  },
  {
    field: 'transport_socket_matches',
    v3: {
      transport_socket_matches: [
        { name: 'mtls', match: { acceptMTLS: true }, transport_socket: { name: 'envoy.transport_sockets.tls', typed_config: { '@type': TLS_TYPE } } },
        { name: 'plain', transport_socket: { name: 'envoy.transport_sockets.raw_buffer' } },
      ],
    },
    expect: (c) =>
      assert.deepEqual(c.transportSocketMatches, [
        { name: 'mtls', match: { acceptMTLS: true }, transportSocket: { kind: 'tls', context: { common: EMPTY_COMMON, sni: '', allowRenegotiation: false, maxSessionKeys: 1 } } },
        { name: 'plain', match: {}, transportSocket: { kind: 'raw_buffer' } },
      ]),
  },
];

for (const row of ROWS) {
  test(`cluster field ${row.field}: v2 and v3 forms load into the model`, () => {
    for (const version of [2, 3] as const) {
      const fields = version === 2 ? (row.v2 ?? row.v3) : row.v3;
      if (version === 3 && row.v3Unknown !== undefined) {
        assert.throws(() => load(fields, 3), (e: Error) => e.message.endsWith(`${CLUSTER}.${row.v3Unknown}: unknown field`), row.field);
        continue;
      }
      const { loaded, refused } = loadOrRefused(fields, version);
      if (loaded !== null) row.expect?.(loaded.bootstrap.clusters[0]!, version, loaded);
      assert.deepEqual(refused.sort(), [...(row.refused ?? [])].sort(), `${row.field} v${version}`);
    }
  });
}

test('cluster defaults: every field the spec gives a default for', () => {
  const c = load({}, 3).bootstrap.clusters[0]!;
  assert.deepEqual(
    {
      type: c.type,
      clusterType: c.clusterType,
      edsClusterConfig: c.edsClusterConfig,
      lbPolicy: c.lbPolicy,
      perConnectionBufferLimitBytes: c.perConnectionBufferLimitBytes,
      maxRequestsPerConnection: c.maxRequestsPerConnection,
      healthChecks: c.healthChecks,
      transportSocket: c.transportSocket,
      http2ProtocolOptions: c.http2ProtocolOptions,
      protocolSelection: c.protocolSelection,
      dnsRefreshRateMs: c.dnsRefreshRateMs,
      dnsFailureRefreshRate: c.dnsFailureRefreshRate,
      respectDnsTtl: c.respectDnsTtl,
      dnsLookupFamily: c.dnsLookupFamily,
      dnsResolvers: c.dnsResolvers,
      useTcpForDnsLookups: c.useTcpForDnsLookups,
      cleanupIntervalMs: c.cleanupIntervalMs,
      lbSubsetConfig: c.lbSubsetConfig,
      ringHashLbConfig: c.ringHashLbConfig,
      maglevLbConfig: c.maglevLbConfig,
      originalDstLbConfig: c.originalDstLbConfig,
      leastRequestLbConfig: c.leastRequestLbConfig,
      commonLbConfig: c.commonLbConfig,
      drainConnectionsOnHostRemoval: c.drainConnectionsOnHostRemoval,
    },
    {
      type: 'STATIC',
      clusterType: null,
      edsClusterConfig: null,
      lbPolicy: 'ROUND_ROBIN',
      perConnectionBufferLimitBytes: 1048576,
      maxRequestsPerConnection: 0,
      healthChecks: [],
      transportSocket: null,
      http2ProtocolOptions: null,
      protocolSelection: 'USE_CONFIGURED_PROTOCOL',
      dnsRefreshRateMs: 5000,
      dnsFailureRefreshRate: null,
      respectDnsTtl: false,
      dnsLookupFamily: 'AUTO',
      dnsResolvers: [],
      useTcpForDnsLookups: false,
      cleanupIntervalMs: 5000,
      lbSubsetConfig: null,
      ringHashLbConfig: { minimumRingSize: 1024, maximumRingSize: 8388608, hashFunction: 'XX_HASH' },
      maglevLbConfig: { tableSize: 65537 },
      originalDstLbConfig: { useHttpHeader: false },
      leastRequestLbConfig: { choiceCount: 2, activeRequestBias: null },
      commonLbConfig: {
        healthyPanicThreshold: 50,
        zoneAware: { routingEnabled: 100, minClusterSize: 6, failTrafficOnPanic: false },
        localityWeighted: false,
        updateMergeWindowMs: 1000,
        ignoreNewHostsUntilFirstHc: false,
        useHostnameForHashing: false,
      },
      drainConnectionsOnHostRemoval: false,
    },
  );
});

// The connection-level fields load and behave: test/unit/cluster_connection_config.test.ts and
// test/integration/cluster_connection_options.test.ts.

test('cluster protocol option refusals name the field and why', () => {
  const reasons = (fields: Json): string[] => {
    const result = refusals(() => load(fields, 3));
    if (!Array.isArray(result)) return [];
    return result.map((f) => `${f.fieldPath.slice(CLUSTER.length + 1)}: ${f.reason}`);
  };
  assert.deepEqual(reasons({ common_http_protocol_options: { headers_with_underscores_action: 'DROP_HEADER' } }), [
    'common_http_protocol_options.headers_with_underscores_action: headers_with_underscores_action acts on requests from downstream clients only; Envoy ignores it on a cluster (it would be ignored)',
  ]);
  assert.deepEqual(reasons({ typed_extension_protocol_options: { 'envoy.filters.network.thrift_proxy': { '@type': STRUCT_TYPE, value: {} } } }), [
    'typed_extension_protocol_options["envoy.filters.network.thrift_proxy"]: protocol options for proxy.filters.network.thrift_proxy, a filter this build does not have (it would be ignored)',
  ]);
  // As Envoy: a name no filter registers fails the load, whichever the form.
  assert.deepEqual(reasons({ typed_extension_protocol_options: { 'envoy.filters.network.tcp_proxy': { '@type': STRUCT_TYPE, value: {} } } }), [
    `typed_extension_protocol_options["envoy.filters.network.tcp_proxy"]: Didn't find a registered network or http filter or protocol options implementation for name: 'envoy.filters.network.tcp_proxy'`,
  ]);
  assert.throws(
    () => load({ extension_protocol_options: { 'envoy.filters.network.tcp_proxy': {} } }, 2),
    (e: Error) =>
      e.message.endsWith(
        `${CLUSTER}.extension_protocol_options["envoy.filters.network.tcp_proxy"]: Didn't find a registered network or http filter or protocol options implementation for name: 'envoy.filters.network.tcp_proxy'`,
      ),
  );
});

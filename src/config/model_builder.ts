// The internal model (model.ts) from a decoded, validated v3 bootstrap: defaults filled in,
// durations in milliseconds, names in our spelling. Pure, apart from naming unnamed listeners
// with a random UUID as Envoy does.

import { randomUUID } from 'node:crypto';
import {
  boolField,
  durationMs,
  enumField,
  isJsonObject,
  JsonObject,
  messageField,
  messageList,
  numberField,
  stringField,
  stringList,
} from './json';
import { stringMatch } from './string_match_model';
import { adminSecurity } from './admin_security_model';
import { filterChainMatch, listenerFilters } from './filter_chain_match_model';
import { apiConfigSourceOf, configSourceOf } from './config_source';
import { secretOf } from './tls_secret_model';
import { DEFAULT_OVERPROVISIONING_FACTOR } from './model';
import type {
  AdminConfig,
  Bootstrap,
  ClusterConfig,
  ClusterLoadAssignment,
  CircuitBreakers,
  CircuitBreakerThresholds,
  OutlierDetection,
  ClusterProtocolSelection,
  CommonLbConfig,
  DiscoveryType,
  DnsLookupFamily,
  DynamicResourcesConfig,
  EndpointHealthStatus,
  FilterChainConfig,
  HealthCheck,
  HealthChecker,
  HistogramBucketRule,
  Http2ProtocolOptions,
  CommonHttpProtocolOptions,
  HeadersWithUnderscoresAction,
  Http1ProtocolOptions,
  LbEndpoint,
  LbPolicy,
  LbSubsetConfig,
  LbSubsetFallbackPolicy,
  LbSubsetSelector,
  LeastRequestLbConfig,
  MaglevLbConfig,
  RoutingPriority,
  ListenerConfig,
  Locality,
  LocalityLbEndpoints,
  FractionalPercent,
  LoadAssignmentPolicy,
  PercentDenominator,
  RuntimeFraction,
  RefreshRate,
  RingHashLbConfig,
  RuntimeLayerConfig,
  SocketAddress,
  StatsConfig,
  TcpKeepalive,
  UpstreamHttpProtocolOptions,
} from './model';
import type { ConfigExtensions } from './extension';
import { proxySpelling } from './names';
import { flattenStaticLayer } from '../runtime/static_layer';
import { overloadManagerModel } from './overload_manager_model';
import { deepFreeze } from '../common/deep_freeze';

/** Envoy 1.16's outlier detection defaults of the UInt32Value fields, by field name. */
const OUTLIER_DEFAULTS = {
  consecutive_5xx: 5,
  consecutive_gateway_failure: 5,
  consecutive_local_origin_failure: 5,
  max_ejection_percent: 10,
  enforcing_consecutive_5xx: 100,
  enforcing_consecutive_gateway_failure: 0,
  enforcing_consecutive_local_origin_failure: 100,
  enforcing_success_rate: 100,
  enforcing_local_origin_success_rate: 100,
  enforcing_failure_percentage: 0,
  enforcing_failure_percentage_local_origin: 0,
  success_rate_minimum_hosts: 5,
  success_rate_request_volume: 100,
  success_rate_stdev_factor: 1900,
  failure_percentage_threshold: 85,
  failure_percentage_minimum_hosts: 5,
  failure_percentage_request_volume: 50,
} as const;
const OUTLIER_INTERVAL_MS = 10_000;
const OUTLIER_BASE_EJECTION_TIME_MS = 30_000;

/** Defaults of Envoy 1.16 for fields left unset. */
const DEFAULTS = {
  // Envoy's circuit breaker thresholds when none are configured.
  circuitBreakerMax: 1024,
  circuitBreakerMaxRetries: 3,
  circuitBreakerUnlimited: 0xffffffff,
  retryBudgetPercent: 20,
  retryBudgetMinConcurrency: 3,
  perConnectionBufferLimitBytes: 1024 * 1024,
  listenerFiltersTimeoutMs: 15_000,
  connectTimeoutMs: 5_000,
  connectionIdleTimeoutMs: 60 * 60 * 1000,
  maxHeadersCount: 100,
  endpointWeight: 1,
  statsFlushIntervalMs: 5_000,
  dnsRefreshRateMs: 5_000,
  refreshRateMaxFactor: 10,
  cleanupIntervalMs: 5_000,
  minimumRingSize: 1024,
  maglevTableSize: 65537,
  maximumRingSize: 8 * 1024 * 1024,
  leastRequestChoiceCount: 2,
  healthyPanicThreshold: 50,
  zoneRoutingEnabled: 100,
  zoneMinClusterSize: 6,
  updateMergeWindowMs: 1_000,
  healthCheckNoTrafficIntervalMs: 60_000,
  // Envoy's /var/log/envoy/envoy.prof.
  profilePath: '/var/log/proxy/proxy.prof',
} as const;

/**
 * @param bootstrap decoded by decodeProtoJson, names canonicalized, and validated
 * @param extensions the registry validation admitted its extensions from, which build their models
 */
export function buildBootstrapModel(bootstrap: JsonObject, extensions: ConfigExtensions): Bootstrap {
  const resources = messageField(bootstrap, 'static_resources') ?? {};
  const node = messageField(bootstrap, 'node') ?? {};
  return deepFreeze({
    node: {
      id: stringField(node, 'id'),
      cluster: stringField(node, 'cluster'),
      locality: locality(messageField(node, 'locality')),
    },
    admin: admin(messageField(bootstrap, 'admin'), extensions),
    listeners: messageList(resources, 'listeners').map((config) => listener(config, extensions)),
    clusters: (() => {
      const defaults = new AbsentMessageModels();
      return messageList(resources, 'clusters').map((config) => cluster(config, extensions, defaults));
    })(),
    localClusterName: stringField(messageField(bootstrap, 'cluster_manager') ?? {}, 'local_cluster_name') || null,
    statsFlushIntervalMs: millis(bootstrap, 'stats_flush_interval', DEFAULTS.statsFlushIntervalMs),
    statsConfig: statsConfig(messageField(bootstrap, 'stats_config') ?? {}),
    statsSinks: messageList(bootstrap, 'stats_sinks').map((sink) => extensions.model('proxy.stats_sinks', sink)),
    runtimeLayers: runtimeLayers(messageField(bootstrap, 'layered_runtime')),
    dynamicResources: dynamicResources(messageField(bootstrap, 'dynamic_resources') ?? {}),
    tracing: (() => {
      const tracer = messageField(messageField(bootstrap, 'tracing') ?? {}, 'http');
      return tracer === undefined ? null : extensions.model('proxy.tracers', tracer);
    })(),
    secrets: messageList(resources, 'secrets').map(secretOf),
    overloadManager: (() => {
      const manager = messageField(bootstrap, 'overload_manager');
      return manager === undefined ? null : overloadManagerModel(manager, extensions);
    })(),
    source: bootstrap,
  });
}

function dynamicResources(config: JsonObject): DynamicResourcesConfig {
  const ads = messageField(config, 'ads_config');
  const cds = messageField(config, 'cds_config');
  const lds = messageField(config, 'lds_config');
  return {
    adsConfig: ads === undefined ? null : apiConfigSourceOf(ads),
    cdsConfig: cds === undefined ? null : configSourceOf(cds),
    ldsConfig: lds === undefined ? null : configSourceOf(lds),
  };
}

function admin(config: JsonObject | undefined, extensions: ConfigExtensions): AdminConfig | null {
  const address = config && messageField(config, 'address');
  if (config === undefined || address === undefined) return null;
  const security = messageField(config, 'security');
  return {
    address: socketAddress(address),
    accessLogPath: stringField(config, 'access_log_path'),
    profilePath: stringField(config, 'profile_path') || DEFAULTS.profilePath,
    security: security === undefined ? null : adminSecurity(security, extensions),
  };
}

function listener(config: JsonObject, extensions: ConfigExtensions): ListenerConfig {
  const filterChains = messageList(config, 'filter_chains').map((chain) => filterChain(chain, extensions));
  return {
    name: stringField(config, 'name') || randomUUID(),
    address: socketAddress(messageField(config, 'address') ?? {}),
    perConnectionBufferLimitBytes: numberField(
      config,
      'per_connection_buffer_limit_bytes',
      DEFAULTS.perConnectionBufferLimitBytes,
    ),
    reusePort: boolField(config, 'reuse_port'),
    // Its one balance type; validation requires it to be set.
    exactBalance: messageField(config, 'connection_balance_config') !== undefined,
    trafficDirection: enumField(config, 'traffic_direction', 'UNSPECIFIED'),
    listenerFilters: listenerFilters(config, filterChains.map((chain) => chain.match), extensions),
    listenerFiltersTimeoutMs: millis(config, 'listener_filters_timeout', DEFAULTS.listenerFiltersTimeoutMs),
    continueOnListenerFiltersTimeout: boolField(config, 'continue_on_listener_filters_timeout'),
    filterChains,
  };
}

function filterChain(config: JsonObject, extensions: ConfigExtensions): FilterChainConfig {
  const transportSocket = messageField(config, 'transport_socket');
  return {
    match: filterChainMatch(messageField(config, 'filter_chain_match')),
    filters: messageList(config, 'filters').map((filter) => extensions.model('proxy.filters.network', filter)),
    transportSocket: transportSocket === undefined ? null : extensions.model('proxy.transport_sockets.downstream', transportSocket),
  };
}

/** common_http_protocol_options, on a connection manager or a cluster: the same defaults on both sides. */
export function commonHttpProtocolOptionsOf(config: JsonObject): CommonHttpProtocolOptions {
  return {
    idleTimeoutMs: millis(config, 'idle_timeout', DEFAULTS.connectionIdleTimeoutMs),
    maxConnectionDurationMs: millis(config, 'max_connection_duration', 0),
    maxHeadersCount: numberField(config, 'max_headers_count', DEFAULTS.maxHeadersCount),
    maxStreamDurationMs: millis(config, 'max_stream_duration', 0),
    headersWithUnderscoresAction: enumField<HeadersWithUnderscoresAction>(config, 'headers_with_underscores_action', 'ALLOW'),
  };
}

export function http1ProtocolOptionsOf(config: JsonObject): Http1ProtocolOptions {
  const keyFormat = messageField(config, 'header_key_format');
  return {
    acceptHttp10: boolField(config, 'accept_http_10'),
    defaultHostForHttp10: stringField(config, 'default_host_for_http_10'),
    headerKeyFormat: keyFormat !== undefined && messageField(keyFormat, 'proper_case_words') !== undefined ? 'proper_case_words' : 'default',
    enableTrailers: boolField(config, 'enable_trailers'),
  };
}

/** Envoy's Http2ProtocolOptions defaults (source/common/http/http2/codec_impl.h); null when unset. */
export function http2ProtocolOptionsOf(config: JsonObject | undefined): Http2ProtocolOptions | null {
  if (config === undefined) return null;
  return {
    maxConcurrentStreams: numberField(config, 'max_concurrent_streams', 2147483647),
    initialStreamWindowSize: numberField(config, 'initial_stream_window_size', 268435456),
    initialConnectionWindowSize: numberField(config, 'initial_connection_window_size', 268435456),
    hpackTableSize: numberField(config, 'hpack_table_size', 4096),
  };
}

/**
 * The models of absent sub-messages, each made once and shared by every model built with the
 * same instance: 10,000 clusters without circuit breakers or lb configs then hold one default
 * each, which halves what the supervisor serializes for its workers.
 */
export class AbsentMessageModels {
  private readonly made = new Map<(config: JsonObject) => unknown, unknown>();

  of<T>(build: (config: JsonObject) => T, config: JsonObject | undefined): T {
    if (config !== undefined) return build(config);
    if (!this.made.has(build)) this.made.set(build, deepFreeze(build({})));
    return this.made.get(build) as T;
  }
}

/** A cluster's model: a static one, or a CDS resource once validated (cluster_resource.ts). */
export function cluster(config: JsonObject, extensions: ConfigExtensions, defaults = new AbsentMessageModels()): ClusterConfig {
  const name = stringField(config, 'name');
  const loadAssignment = messageField(config, 'load_assignment');
  const customType = messageField(config, 'cluster_type');
  const eds = messageField(config, 'eds_cluster_config');
  const failureRate = messageField(config, 'dns_failure_refresh_rate');
  const subset = messageField(config, 'lb_subset_config');
  const transportSocket = messageField(config, 'transport_socket');
  return {
    name,
    statName: (stringField(config, 'alt_stat_name') || name).replaceAll(':', '_'),
    type: enumField<DiscoveryType>(config, 'type', 'STATIC'),
    clusterType: customType === undefined ? null : extensions.model('proxy.clusters', customType),
    edsClusterConfig:
      eds === undefined
        ? null
        : { edsConfig: configSourceOf(messageField(eds, 'eds_config') ?? {}), serviceName: stringField(eds, 'service_name') || name },
    connectTimeoutMs: millis(config, 'connect_timeout', DEFAULTS.connectTimeoutMs),
    lbPolicy: enumField<LbPolicy>(config, 'lb_policy', 'ROUND_ROBIN'),
    perConnectionBufferLimitBytes: numberField(
      config,
      'per_connection_buffer_limit_bytes',
      DEFAULTS.perConnectionBufferLimitBytes,
    ),
    maxRequestsPerConnection: numberField(config, 'max_requests_per_connection'),
    loadAssignment: clusterLoadAssignment(loadAssignment ?? { cluster_name: name }),
    upstreamBindConfig: upstreamBindConfig(messageField(config, 'upstream_bind_config')),
    tcpKeepalive: tcpKeepalive(messageField(messageField(config, 'upstream_connection_options') ?? {}, 'tcp_keepalive')),
    closeConnectionsOnHostSetChange: boolField(messageField(config, 'common_lb_config') ?? {}, 'close_connections_on_host_set_change'),
    trackTimeoutBudgets: boolField(config, 'track_timeout_budgets'),
    metadata: filterMetadata(messageField(config, 'metadata')),
    healthChecks: messageList(config, 'health_checks').flatMap((check) => healthCheckModel(check, extensions)),
    circuitBreakers: defaults.of(circuitBreakersConfig, messageField(config, 'circuit_breakers')),
    transportSocket: transportSocket === undefined ? null : extensions.model('proxy.transport_sockets.upstream', transportSocket),
    transportSocketMatches: messageList(config, 'transport_socket_matches').map((match) => {
      const socket = messageField(match, 'transport_socket');
      return {
        name: stringField(match, 'name'),
        match: messageField(match, 'match') ?? {},
        transportSocket: socket === undefined ? null : extensions.model('proxy.transport_sockets.upstream', socket),
      };
    }),
    upstreamHttpProtocolOptions: upstreamHttpProtocolOptions(messageField(config, 'upstream_http_protocol_options')),
    commonHttpProtocolOptions: defaults.of(commonHttpProtocolOptionsOf, messageField(config, 'common_http_protocol_options')),
    httpProtocolOptions: defaults.of(http1ProtocolOptionsOf, messageField(config, 'http_protocol_options')),
    http2ProtocolOptions: http2ProtocolOptionsOf(messageField(config, 'http2_protocol_options')),
    typedExtensionProtocolOptions: Object.fromEntries(
      Object.entries(messageField(config, 'typed_extension_protocol_options') ?? {}).map(([key, value]) => [
        extensions.canonicalName(key),
        isJsonObject(value) ? value : {},
      ]),
    ),
    protocolSelection: enumField<ClusterProtocolSelection>(config, 'protocol_selection', 'USE_CONFIGURED_PROTOCOL'),
    dnsRefreshRateMs: millis(config, 'dns_refresh_rate', DEFAULTS.dnsRefreshRateMs),
    dnsFailureRefreshRate: failureRate === undefined ? null : refreshRate(failureRate),
    respectDnsTtl: boolField(config, 'respect_dns_ttl'),
    dnsLookupFamily: enumField<DnsLookupFamily>(config, 'dns_lookup_family', 'AUTO'),
    dnsResolvers: messageList(config, 'dns_resolvers').map(socketAddress),
    useTcpForDnsLookups: boolField(config, 'use_tcp_for_dns_lookups'),
    outlierDetection: outlierDetectionConfig(messageField(config, 'outlier_detection')),
    cleanupIntervalMs: millis(config, 'cleanup_interval', DEFAULTS.cleanupIntervalMs),
    lbSubsetConfig: subset === undefined ? null : lbSubsetConfig(subset),
    ringHashLbConfig: defaults.of(ringHashLbConfig, messageField(config, 'ring_hash_lb_config')),
    maglevLbConfig: defaults.of(maglevLbConfig, messageField(config, 'maglev_lb_config')),
    originalDstLbConfig: defaults.of(originalDstLbConfig, messageField(config, 'original_dst_lb_config')),
    leastRequestLbConfig: defaults.of(leastRequestLbConfig, messageField(config, 'least_request_lb_config')),
    commonLbConfig: defaults.of(commonLbConfig, messageField(config, 'common_lb_config')),
    drainConnectionsOnHostRemoval: boolField(config, 'ignore_health_on_host_removal'),
    closeConnectionsOnHostHealthFailure: boolField(config, 'close_connections_on_host_health_failure'),
    source: config,
  };
}

/**
 * Validation made timeout, interval, both thresholds and one checker present. A check whose
 * checker this build lacks (custom_health_check) has no model: the capability check refuses it
 * by field path.
 */
function healthCheckModel(config: JsonObject, extensions: ConfigExtensions): HealthCheck[] {
  const checker = healthChecker(config, extensions);
  if (checker === null) return [];
  const intervalMs = millis(config, 'interval', 0);
  const unhealthyIntervalMs = millis(config, 'unhealthy_interval', intervalMs);
  return [
    {
      timeoutMs: millis(config, 'timeout', 0),
      intervalMs,
      initialJitterMs: millis(config, 'initial_jitter', 0),
      intervalJitterMs: millis(config, 'interval_jitter', 0),
      intervalJitterPercent: numberField(config, 'interval_jitter_percent'),
      unhealthyThreshold: numberField(config, 'unhealthy_threshold'),
      healthyThreshold: numberField(config, 'healthy_threshold'),
      noTrafficIntervalMs: millis(config, 'no_traffic_interval', DEFAULTS.healthCheckNoTrafficIntervalMs),
      unhealthyIntervalMs,
      unhealthyEdgeIntervalMs: millis(config, 'unhealthy_edge_interval', unhealthyIntervalMs),
      healthyEdgeIntervalMs: millis(config, 'healthy_edge_interval', intervalMs),
      reuseConnection: boolField(config, 'reuse_connection', true),
      transportSocketMatchCriteria: messageField(config, 'transport_socket_match_criteria') ?? null,
      eventLogPath: stringField(config, 'event_log_path'),
      alwaysLogHealthCheckFailures: boolField(config, 'always_log_health_check_failures'),
      checker,
    },
  ];
}

/** The check's checker, modelled by the registry's checker whose field is set; null when none is. */
function healthChecker(config: JsonObject, extensions: ConfigExtensions): HealthChecker | null {
  for (const checker of extensions.of('proxy.health_checkers')) {
    const checkerConfig = messageField(config, checker.name);
    if (checkerConfig !== undefined) return checker.model(checkerConfig, { extensions });
  }
  return null;
}

/** Envoy's ResourceManagers::load: per priority, the last thresholds entry naming it, else the defaults. */
export function circuitBreakersConfig(config: JsonObject): CircuitBreakers {
  const entries = messageList(config, 'thresholds');
  const of = (priority: RoutingPriority): CircuitBreakerThresholds => {
    const entry = entries.filter((t) => enumField<RoutingPriority>(t, 'priority', 'DEFAULT') === priority).at(-1) ?? {};
    const budget = messageField(entry, 'retry_budget');
    return {
      maxConnections: numberField(entry, 'max_connections', DEFAULTS.circuitBreakerMax),
      maxPendingRequests: numberField(entry, 'max_pending_requests', DEFAULTS.circuitBreakerMax),
      maxRequests: numberField(entry, 'max_requests', DEFAULTS.circuitBreakerMax),
      maxRetries: numberField(entry, 'max_retries', DEFAULTS.circuitBreakerMaxRetries),
      maxConnectionPools: numberField(entry, 'max_connection_pools', DEFAULTS.circuitBreakerUnlimited),
      trackRemaining: boolField(entry, 'track_remaining'),
      retryBudget:
        budget === undefined
          ? null
          : {
              budgetPercent: numberField(messageField(budget, 'budget_percent') ?? {}, 'value', DEFAULTS.retryBudgetPercent),
              minRetryConcurrency: numberField(budget, 'min_retry_concurrency', DEFAULTS.retryBudgetMinConcurrency),
            },
    };
  };
  return { DEFAULT: of('DEFAULT'), HIGH: of('HIGH') };
}

/** Envoy 1.16's DetectorConfig: each field or its default. */
function outlierDetectionConfig(config: JsonObject | undefined): OutlierDetection | null {
  if (config === undefined) return null;
  const uint = (key: keyof typeof OUTLIER_DEFAULTS) => numberField(config, key, OUTLIER_DEFAULTS[key]);
  return {
    consecutive5xx: uint('consecutive_5xx'),
    consecutiveGatewayFailure: uint('consecutive_gateway_failure'),
    consecutiveLocalOriginFailure: uint('consecutive_local_origin_failure'),
    intervalMs: millis(config, 'interval', OUTLIER_INTERVAL_MS),
    baseEjectionTimeMs: millis(config, 'base_ejection_time', OUTLIER_BASE_EJECTION_TIME_MS),
    maxEjectionPercent: uint('max_ejection_percent'),
    enforcingConsecutive5xx: uint('enforcing_consecutive_5xx'),
    enforcingConsecutiveGatewayFailure: uint('enforcing_consecutive_gateway_failure'),
    enforcingConsecutiveLocalOriginFailure: uint('enforcing_consecutive_local_origin_failure'),
    enforcingSuccessRate: uint('enforcing_success_rate'),
    enforcingLocalOriginSuccessRate: uint('enforcing_local_origin_success_rate'),
    enforcingFailurePercentage: uint('enforcing_failure_percentage'),
    enforcingFailurePercentageLocalOrigin: uint('enforcing_failure_percentage_local_origin'),
    successRateMinimumHosts: uint('success_rate_minimum_hosts'),
    successRateRequestVolume: uint('success_rate_request_volume'),
    successRateStdevFactor: uint('success_rate_stdev_factor'),
    failurePercentageThreshold: uint('failure_percentage_threshold'),
    failurePercentageMinimumHosts: uint('failure_percentage_minimum_hosts'),
    failurePercentageRequestVolume: uint('failure_percentage_request_volume'),
    splitExternalLocalOriginErrors: boolField(config, 'split_external_local_origin_errors'),
  };
}

function maglevLbConfig(config: JsonObject): MaglevLbConfig {
  return { tableSize: numberField(config, 'table_size', DEFAULTS.maglevTableSize) };
}

function originalDstLbConfig(config: JsonObject): ClusterConfig['originalDstLbConfig'] {
  return { useHttpHeader: boolField(config, 'use_http_header') };
}

function leastRequestLbConfig(config: JsonObject): LeastRequestLbConfig {
  const bias = messageField(config, 'active_request_bias');
  return {
    choiceCount: numberField(config, 'choice_count', DEFAULTS.leastRequestChoiceCount),
    activeRequestBias: bias === undefined ? null : { defaultValue: numberField(bias, 'default_value'), runtimeKey: stringField(bias, 'runtime_key') },
  };
}

function upstreamBindConfig(config: JsonObject | undefined): SocketAddress | null {
  const source = config === undefined ? undefined : messageField(config, 'source_address');
  return source === undefined ? null : { address: stringField(source, 'address'), port: numberField(source, 'port_value') };
}

function upstreamHttpProtocolOptions(config: JsonObject | undefined): UpstreamHttpProtocolOptions | null {
  if (config === undefined) return null;
  return { autoSni: boolField(config, 'auto_sni'), autoSanValidation: boolField(config, 'auto_san_validation') };
}

function tcpKeepalive(config: JsonObject | undefined): TcpKeepalive | null {
  if (config === undefined) return null;
  const knob = (key: string): number | null => (config[key] === undefined ? null : numberField(config, key));
  return { probes: knob('keepalive_probes'), timeS: knob('keepalive_time'), intervalS: knob('keepalive_interval') };
}

/** Validation made base_interval present and above zero. */
function refreshRate(config: JsonObject): RefreshRate {
  const baseMs = millis(config, 'base_interval', 0);
  return { baseMs, maxMs: millis(config, 'max_interval', baseMs * DEFAULTS.refreshRateMaxFactor) };
}

function lbSubsetConfig(config: JsonObject): LbSubsetConfig {
  return {
    fallbackPolicy: enumField<LbSubsetFallbackPolicy>(config, 'fallback_policy', 'NO_FALLBACK'),
    defaultSubset: messageField(config, 'default_subset') ?? {},
    subsetSelectors: messageList(config, 'subset_selectors').map((selector) => ({
      keys: stringList(selector, 'keys'),
      fallbackPolicy: enumField<LbSubsetSelector['fallbackPolicy']>(selector, 'fallback_policy', 'NOT_DEFINED'),
      fallbackKeysSubset: stringList(selector, 'fallback_keys_subset'),
    })),
    localityWeightAware: boolField(config, 'locality_weight_aware'),
    scaleLocalityWeight: boolField(config, 'scale_locality_weight'),
    panicModeAny: boolField(config, 'panic_mode_any'),
    listAsAny: boolField(config, 'list_as_any'),
  };
}

function ringHashLbConfig(config: JsonObject): RingHashLbConfig {
  return {
    minimumRingSize: numberField(config, 'minimum_ring_size', DEFAULTS.minimumRingSize),
    maximumRingSize: numberField(config, 'maximum_ring_size', DEFAULTS.maximumRingSize),
    hashFunction: enumField<RingHashLbConfig['hashFunction']>(config, 'hash_function', 'XX_HASH'),
  };
}

function commonLbConfig(config: JsonObject): CommonLbConfig {
  const zoneAware = messageField(config, 'zone_aware_lb_config') ?? {};
  return {
    healthyPanicThreshold: percent(config, 'healthy_panic_threshold', DEFAULTS.healthyPanicThreshold),
    zoneAware: {
      routingEnabled: percent(zoneAware, 'routing_enabled', DEFAULTS.zoneRoutingEnabled),
      minClusterSize: numberField(zoneAware, 'min_cluster_size', DEFAULTS.zoneMinClusterSize),
      failTrafficOnPanic: boolField(zoneAware, 'fail_traffic_on_panic'),
    },
    localityWeighted: messageField(config, 'locality_weighted_lb_config') !== undefined,
    updateMergeWindowMs: millis(config, 'update_merge_window', DEFAULTS.updateMergeWindowMs),
    ignoreNewHostsUntilFirstHc: boolField(config, 'ignore_new_hosts_until_first_hc'),
    useHostnameForHashing: boolField(messageField(config, 'consistent_hashing_lb_config') ?? {}, 'use_hostname_for_hashing'),
  };
}

/** A type.v3.Percent field in whole percent (Envoy truncates to the nearest 1%), or the default when unset. */
function percent(config: JsonObject, key: string, fallback: number): number {
  const value = messageField(config, key);
  return value === undefined ? fallback : Math.trunc(numberField(value, 'value'));
}

export function fractionalPercent(config: JsonObject): FractionalPercent {
  return { numerator: numberField(config, 'numerator'), denominator: enumField<PercentDenominator>(config, 'denominator', 'HUNDRED') };
}

/** A RuntimeFractionalPercent (the protos require its default_value). */
export function runtimeFraction(config: JsonObject): RuntimeFraction {
  return { defaultValue: fractionalPercent(messageField(config, 'default_value') ?? {}), runtimeKey: stringField(config, 'runtime_key') };
}

/** A ClusterLoadAssignment, static (a cluster's load_assignment) or from EDS. */
export function clusterLoadAssignment(config: JsonObject): ClusterLoadAssignment {
  return {
    clusterName: stringField(config, 'cluster_name'),
    endpoints: messageList(config, 'endpoints').map(localityLbEndpoints),
    policy: loadAssignmentPolicy(messageField(config, 'policy') ?? {}),
  };
}

function loadAssignmentPolicy(config: JsonObject): LoadAssignmentPolicy {
  const drop = messageList(config, 'drop_overloads')[0];
  const percentage = drop === undefined ? undefined : messageField(drop, 'drop_percentage');
  return {
    overprovisioningFactor: numberField(config, 'overprovisioning_factor', DEFAULT_OVERPROVISIONING_FACTOR),
    // An unset drop_percentage is 0 out of 100: nothing dropped.
    dropOverload: drop === undefined ? null : fractionalPercent(percentage ?? {}),
    endpointStaleAfterMs: durationMs(config, 'endpoint_stale_after') ?? null,
  };
}

function localityLbEndpoints(config: JsonObject): LocalityLbEndpoints {
  return {
    locality: locality(messageField(config, 'locality')),
    priority: numberField(config, 'priority'),
    loadBalancingWeight: numberField(config, 'load_balancing_weight'),
    lbEndpoints: messageList(config, 'lb_endpoints').map(lbEndpoint),
  };
}

function lbEndpoint(config: JsonObject): LbEndpoint {
  const endpoint = messageField(config, 'endpoint') ?? {};
  return {
    address: socketAddress(messageField(endpoint, 'address') ?? {}),
    hostname: stringField(endpoint, 'hostname'),
    healthStatus: enumField<EndpointHealthStatus>(config, 'health_status', 'UNKNOWN'),
    loadBalancingWeight: numberField(config, 'load_balancing_weight', DEFAULTS.endpointWeight),
    metadata: filterMetadata(messageField(config, 'metadata')),
  };
}

/**
 * A Metadata message's filter_metadata, its namespaces in our spelling: an Envoy file's
 * `envoy.lb` is the `proxy.lb` the subset balancer and /clusters read.
 */
export function filterMetadata(metadata: JsonObject | undefined): Readonly<Record<string, unknown>> {
  const namespaces = messageField(metadata ?? {}, 'filter_metadata') ?? {};
  return Object.fromEntries(Object.entries(namespaces).map(([name, value]) => [proxySpelling(name), value]));
}

function statsConfig(config: JsonObject): StatsConfig {
  return {
    statsTags: messageList(config, 'stats_tags').map((tag) => {
      const fixedValue = tag['fixed_value'];
      return { tagName: proxySpelling(stringField(tag, 'tag_name')), fixedValue: typeof fixedValue === 'string' ? fixedValue : null };
    }),
    useAllDefaultTags: boolField(config, 'use_all_default_tags', true),
    histogramBucketSettings: messageList(config, 'histogram_bucket_settings').map(histogramBucketRule),
  };
}

function histogramBucketRule(config: JsonObject): HistogramBucketRule {
  const buckets = config['buckets'];
  return {
    match: stringMatch(messageField(config, 'match') ?? {}),
    buckets: (Array.isArray(buckets) ? buckets.map(Number) : []).sort((a, b) => a - b),
  };
}

/**
 * Envoy's layers: as configured; without layered_runtime a `base` static layer (empty) and an
 * `admin` layer; an empty list, an admin layer with no name. (The v2 `runtime` field became a
 * layered_runtime in the v2 upgrade.)
 */
function runtimeLayers(config: JsonObject | undefined): RuntimeLayerConfig[] {
  if (config === undefined) return [{ kind: 'static', name: 'base', values: [] }, { kind: 'admin', name: 'admin' }];
  const layers = messageList(config, 'layers');
  if (layers.length === 0) return [{ kind: 'admin', name: '' }];
  return layers.flatMap((layer, i): RuntimeLayerConfig[] => {
    const name = stringField(layer, 'name');
    const staticLayer = messageField(layer, 'static_layer');
    if (staticLayer !== undefined) {
      return [{ kind: 'static', name, values: flattenStaticLayer(staticLayer, `layered_runtime.layers[${i}].static_layer`) }];
    }
    const disk = messageField(layer, 'disk_layer');
    if (disk !== undefined) {
      return [
        {
          kind: 'disk',
          name,
          symlinkRoot: stringField(disk, 'symlink_root'),
          subdirectory: stringField(disk, 'subdirectory'),
          appendServiceCluster: boolField(disk, 'append_service_cluster'),
        },
      ];
    }
    const rtds = messageField(layer, 'rtds_layer');
    if (rtds !== undefined) {
      return [{ kind: 'rtds', name, resourceName: stringField(rtds, 'name'), source: configSourceOf(messageField(rtds, 'rtds_config') ?? {}) }];
    }
    return layer['admin_layer'] !== undefined ? [{ kind: 'admin', name }] : [];
  });
}

function locality(config: JsonObject | undefined): Locality {
  return {
    region: stringField(config ?? {}, 'region'),
    zone: stringField(config ?? {}, 'zone'),
    subZone: stringField(config ?? {}, 'sub_zone'),
  };
}

export function socketAddress(address: JsonObject): SocketAddress {
  const socket = messageField(address, 'socket_address') ?? {};
  return { address: stringField(socket, 'address'), port: numberField(socket, 'port_value') };
}

/** A duration field in whole milliseconds (truncated, as Envoy does), or the default when unset. */
export function millis(config: JsonObject, key: string, fallback: number): number {
  const value = durationMs(config, key);
  return value === undefined ? fallback : Math.trunc(value);
}

// The immutable internal model that the configuration pipeline produces and that the
// supervisor and workers consume. It is plain data (structured-clone safe) so that the
// supervisor can ship it to workers over the IPC channel unchanged.
//
// Durations are milliseconds, names are already normalized (v2 -> v3 done, `envoy.` ->
// `proxy.`), defaults are filled in. `source` keeps the v3 JSON form for /config_dump.

import type { AccessLogEntryConfig } from '../access_log/access_log_config';
import type { MetadataMatchCriteria } from './metadata_match';
import type { ApiConfigSource, ConfigSourceConfig, GrpcTarget, XdsApiVersion } from './config_source';

export interface SocketAddress {
  readonly address: string;
  readonly port: number;
}

export interface NodeInfo {
  readonly id: string;
  readonly cluster: string;
  readonly locality: Locality;
}

export interface Locality {
  readonly region: string;
  readonly zone: string;
  readonly subZone: string;
}

export interface AdminConfig {
  readonly address: SocketAddress;
  readonly accessLogPath: string;
  /** Where POST /cpuprofiler and /heapprofiler write, before each process's suffix (see process_profiler.ts). */
  readonly profilePath: string;
  /** `admin.security`, a proxy extension; null: the admin is open to whoever reaches it, as in Envoy. */
  readonly security: AdminSecurityConfig | null;
}

/** What an admin caller may do (proxyext.admin.v3.Role): each role may do all the one before it may. */
export type AdminRole = 'viewer' | 'operator' | 'admin';

/** proxyext.admin.v3.AdminSecurity (docs/admin.md#securing-the-admin-interface). */
export interface AdminSecurityConfig {
  readonly bearerTokens: readonly AdminBearerToken[];
  /** TLS on the admin listener; null: plaintext. */
  readonly tls: DownstreamTlsContextConfig | null;
  readonly certificateRoles: readonly AdminCertificateRole[];
  /** Empty: every source may connect. */
  readonly allowedSourceRanges: readonly CidrRange[];
}

export interface AdminBearerToken {
  /** Who holds it, for the logs: never the token. */
  readonly name: string;
  /** The file the token is read from. */
  readonly path: string;
  readonly role: AdminRole;
}

/** A verified client certificate whose SAN (URI, DNS, IP) or RFC 2253 subject matches gets the role. */
export interface AdminCertificateRole {
  readonly identity: 'san' | 'subject';
  readonly match: StringMatch;
  readonly role: AdminRole;
}

/** core.v3.CidrRange. */
export interface CidrRange {
  readonly addressPrefix: string;
  readonly prefixLen: number;
}

export interface Bootstrap {
  readonly node: NodeInfo;
  readonly admin: AdminConfig | null;
  readonly listeners: readonly ListenerConfig[];
  readonly clusters: readonly ClusterConfig[];
  /**
   * cluster_manager.local_cluster_name: the cluster of this proxy's own fleet, whose hosts'
   * localities zone-aware routing compares with every other cluster's. Null when unset.
   */
  readonly localClusterName: string | null;
  /** stats_flush_interval: how often the supervisor ends a histogram interval (and flushes stats). */
  readonly statsFlushIntervalMs: number;
  readonly statsConfig: StatsConfig;
  /** stats_sinks in order: where the supervisor sends the stats at each flush. */
  readonly statsSinks: readonly StatsSinkConfig[];
  /** layered_runtime's layers in stacking order (Envoy's defaults when the bootstrap has none). */
  readonly runtimeLayers: readonly RuntimeLayerConfig[];
  /** dynamic_resources: where discovered configuration comes from. */
  readonly dynamicResources: DynamicResourcesConfig;
  /** tracing.http: the tracer of every connection manager that names none of its own; null when unset. */
  readonly tracing: TracerConfig | null;
  /** static_resources.secrets, which TLS contexts name in an SdsSecretConfig without sds_config. */
  readonly secrets: readonly SecretConfig[];
  /** overload_manager; null when unset. */
  readonly overloadManager: OverloadManagerConfig | null;
  /**
   * The server's local address (first non-loopback address of --local-address-ip-version's
   * family, else loopback), set at start-up: Envoy appends it to x-forwarded-for when the
   * downstream peer has no IP address.
   */
  readonly localAddress?: string;
  /** The whole bootstrap as v3 JSON (snake_case), for /config_dump. */
  readonly source: unknown;
}

/** Bootstrap.dynamic_resources; each null when unset. */
export interface DynamicResourcesConfig {
  /** The management server an `ads` config source streams from. */
  readonly adsConfig: ApiConfigSource | null;
  readonly cdsConfig: ConfigSourceConfig | null;
  readonly ldsConfig: ConfigSourceConfig | null;
}

// ---- listeners ---------------------------------------------------------------------------

export interface ListenerConfig {
  readonly name: string;
  readonly address: SocketAddress;
  readonly perConnectionBufferLimitBytes: number;
  /** reuse_port: a socket per worker, bound with SO_REUSEPORT, rather than one all workers share. */
  readonly reusePort: boolean;
  /**
   * connection_balance_config.exact_balance: each connection goes to the worker holding the
   * fewest of the listener's, whichever accepted it (src/listener/exact_connection_balancer.ts).
   */
  readonly exactBalance: boolean;
  /** What /drain_listeners?inboundonly reads, and tracing (OUTBOUND: egress spans). */
  readonly trafficDirection: 'UNSPECIFIED' | 'INBOUND' | 'OUTBOUND';
  /** Run on each accepted connection, in order, before a filter chain is chosen. */
  readonly listenerFilters: readonly ListenerFilterConfig[];
  /** listener_filters_timeout: how long the listener filters may wait for bytes; 0 disables. */
  readonly listenerFiltersTimeoutMs: number;
  /** On that timeout, choose a filter chain with what is known (true) or close the connection (false). */
  readonly continueOnListenerFiltersTimeout: boolean;
  readonly filterChains: readonly FilterChainConfig[];
}

/**
 * A listener filter. `injected`: the listener had no TLS inspector while its filter chains match
 * on what only the TLS inspector finds, so one was added, as Envoy 1.16 does (with a warning).
 */
export interface ListenerFilterConfig {
  readonly kind: 'tls_inspector' | 'original_dst';
  readonly name: string;
  readonly injected: boolean;
}

/** FilterChainMatch, the criteria this build acts on; null and empty lists match anything. */
export interface FilterChainMatch {
  readonly destinationPort: number | null;
  /** Exact names and `*.suffix` wildcards, lower case. */
  readonly serverNames: readonly string[];
  /** 'tls', 'raw_buffer', or '' for any. */
  readonly transportProtocol: string;
  readonly applicationProtocols: readonly string[];
}

export interface FilterChainConfig {
  readonly match: FilterChainMatch;
  /** In order; the last one is the terminal filter (tcp_proxy or http_connection_manager). */
  readonly filters: readonly NetworkFilterConfig[];
  /** transport_socket (or the v2 tls_context upgraded into one); null: plaintext. */
  readonly transportSocket: DownstreamTransportSocketConfig | null;
}

export type NetworkFilterConfig = TcpProxyConfig | HttpConnectionManagerConfig;

export interface TcpProxyConfig {
  readonly kind: 'tcp_proxy';
  readonly name: string;
  readonly statPrefix: string;
  readonly cluster: string;
  /** 0 disables; Envoy's default is 1 hour. */
  readonly idleTimeoutMs: number;
  /** Each proxied connection is logged to these when it ends. */
  readonly accessLogs: readonly AccessLogEntryConfig[];
}

export interface HttpConnectionManagerConfig {
  readonly kind: 'http_connection_manager';
  readonly name: string;
  readonly statPrefix: string;
  /** The inline route_config; with `rds`, the empty one that serves (404) until RDS brings its own. */
  readonly routeConfig: RouteConfiguration;
  /** Where the route configuration comes from when it is not inline; null for an inline one. */
  readonly rds: RdsConfig | null;
  readonly httpFilters: readonly HttpFilterConfig[];
  /** use_remote_address: when true the downstream peer address is appended to x-forwarded-for. */
  readonly useRemoteAddress: boolean;
  readonly xffNumTrustedHops: number;
  readonly serverName: string;
  /** 0 disables. */
  readonly streamIdleTimeoutMs: number;
  readonly requestTimeoutMs: number;
  /** request_headers_timeout: a request's head must be whole this long after its first byte; 0: no limit. */
  readonly requestHeadersTimeoutMs: number;
  readonly commonHttpProtocolOptions: CommonHttpProtocolOptions;
  readonly httpProtocolOptions: Http1ProtocolOptions;
  readonly codecType: CodecType;
  /** http2_protocol_options, for downstream HTTP/2 connections. */
  readonly http2ProtocolOptions: DownstreamHttp2ProtocolOptions;
  /** Each stream is logged to these when it ends (createAccessLogs builds them per worker). */
  readonly accessLogs: readonly AccessLogEntryConfig[];
  /** upgrade_configs: whether each upgrade type (lower case) is allowed where a route does not say. */
  readonly upgrades: UpgradeSwitches;
  /** generate_request_id (default true): a request without x-request-id gets one. */
  readonly generateRequestId: boolean;
  /** preserve_external_request_id: an edge request's own x-request-id is kept rather than replaced. */
  readonly preserveExternalRequestId: boolean;
  /** skip_xff_append: use_remote_address still decides, but the peer is not appended to x-forwarded-for. */
  readonly skipXffAppend: boolean;
  /** via: appended to the via header of requests and responses; '' for none. */
  readonly via: string;
  readonly serverHeaderTransformation: ServerHeaderTransformation;
  /** normalize_path: dot segments resolved before filters and routing (failure: 400). */
  readonly normalizePath: boolean;
  /** merge_slashes: runs of slashes in the path made one, before filters and routing. */
  readonly mergeSlashes: boolean;
  /** add_user_agent: requests carry the node's cluster and id (x-proxy-downstream-service-*), and a user-agent. */
  readonly addUserAgent: boolean;
  /** tracing: null when unset (no request is traced). */
  readonly tracing: HttpTracingConfig | null;
}

/** What the server response header is: ours always, ours unless the upstream sent one, or the upstream's alone. */
export type ServerHeaderTransformation = 'OVERWRITE' | 'APPEND_IF_ABSENT' | 'PASS_THROUGH';

/** Upgrade types (lower case, e.g. `websocket`) each enabled or not, as an upgrade_configs list says. */
export type UpgradeSwitches = Readonly<Record<string, boolean>>;

/**
 * core.v3.HttpProtocolOptions (common_http_protocol_options), Envoy's defaults filled in. The
 * connection manager applies it to downstream connections, a cluster to its upstream ones.
 */
export interface CommonHttpProtocolOptions {
  /** No stream for this long closes the connection; 0 disables. Envoy's default is 1 hour. */
  readonly idleTimeoutMs: number;
  /** A connection this old is drained and closed; 0: no limit. */
  readonly maxConnectionDurationMs: number;
  /** Headers in one message, pseudo-headers included, beyond which it is refused (Envoy: 100). */
  readonly maxHeadersCount: number;
  /** A stream this old is ended; 0: no limit. */
  readonly maxStreamDurationMs: number;
  readonly headersWithUnderscoresAction: HeadersWithUnderscoresAction;
}

export type HeadersWithUnderscoresAction = 'ALLOW' | 'REJECT_REQUEST' | 'DROP_HEADER';

/** core.v3.Http1ProtocolOptions, the fields this build acts on. */
export interface Http1ProtocolOptions {
  readonly acceptHttp10: boolean;
  /** '' when unset; a no-op unless acceptHttp10, as in Envoy. */
  readonly defaultHostForHttp10: string;
  /** header_key_format: how the HTTP/1 codec spells header names it writes. */
  readonly headerKeyFormat: HeaderKeyFormat;
  /** enable_trailers: chunked messages carry their trailers both ways; else they are dropped, as by Envoy's default. */
  readonly enableTrailers: boolean;
}

/** 'default': as Envoy, lower case; 'proper_case_words': `content-type` is written `Content-Type`. */
export type HeaderKeyFormat = 'default' | 'proper_case_words';

/** Http2ProtocolOptions, the fields this build acts on, Envoy's defaults filled in. */
export interface Http2ProtocolOptions {
  readonly maxConcurrentStreams: number;
  readonly initialStreamWindowSize: number;
  readonly initialConnectionWindowSize: number;
  readonly hpackTableSize: number;
}

/** A connection manager's http2_protocol_options (a cluster's refuses allow_connect). */
export interface DownstreamHttp2ProtocolOptions extends Http2ProtocolOptions {
  /** allow_connect: RFC 8441's extended CONNECT carries upgrades (WebSocket) over HTTP/2. */
  readonly allowConnect: boolean;
  readonly floodLimits: Http2FloodLimits;
}

/** http2_protocol_options' flood limits, Envoy's defaults filled in: they guard downstream connections only, as in Envoy 1.16. */
export interface Http2FloodLimits {
  readonly maxOutboundFrames: number;
  readonly maxOutboundControlFrames: number;
  readonly maxConsecutiveInboundFramesWithEmptyPayload: number;
  readonly maxInboundPriorityFramesPerStream: number;
  readonly maxInboundWindowUpdateFramesPerDataFrameSent: number;
}

/** The connection manager's codec_type. */
export type CodecType = 'AUTO' | 'HTTP1' | 'HTTP2';

export interface HttpFilterConfig {
  readonly name: string; // e.g. 'proxy.filters.http.router'
  /** The typed_config of proxy.filters.http.health_check; unset for the other filters. */
  readonly healthCheck?: HealthCheckConfig;
  /** The typed_config of proxy.filters.http.fault. */
  readonly fault?: FaultConfig;
  /** The typed_config of proxy.filters.http.csrf; unset for the other filters. */
  readonly csrf?: CsrfPolicyConfig;
  /** The typed_config of proxy.filters.http.local_ratelimit; unset for the other filters. */
  readonly localRateLimit?: LocalRateLimitConfig;
  /** The typed_config of proxy.filters.http.compressor and of the deprecated proxy.filters.http.gzip; unset for the other filters. */
  readonly compressor?: CompressorConfig;
  /** The typed_config of proxy.filters.http.buffer; unset for the other filters. */
  readonly buffer?: BufferConfig;
  /** The typed_config of proxy.filters.http.ratelimit; unset for the other filters. */
  readonly rateLimit?: RateLimitFilterConfig;
  /** The typed_config of proxy.filters.http.ext_authz; unset for the other filters. */
  readonly extAuthz?: ExtAuthzConfig;
}

/** proxy.filters.http.fault (HTTPFault), defaults filled in: Envoy 1.16's FaultSettings. */
export interface FaultConfig {
  readonly delay: FaultDelay | null;
  readonly abort: FaultAbort | null;
  /** Faults only for requests routed to this cluster; '' for any. */
  readonly upstreamCluster: string;
  readonly headers: readonly HeaderMatch[];
  /** Faults only for requests whose x-proxy-downstream-service-node is one of these; empty for any. */
  readonly downstreamNodes: readonly string[];
  /** null: unlimited (the runtime key may still set one). */
  readonly maxActiveFaults: number | null;
  readonly responseRateLimit: FaultRateLimit | null;
  readonly runtimeKeys: FaultRuntimeKeys;
  /** No `fault.<downstream cluster>.` counters. */
  readonly disableDownstreamClusterStats: boolean;
}

export interface FaultDelay {
  /** fixed_delay in ms; null for header_delay (the request's x-proxy-fault-delay-request). */
  readonly fixedMs: number | null;
  readonly percentage: FractionalPercent;
}

export interface FaultAbort {
  /** `header`: the request's x-proxy-fault-abort-request / x-proxy-fault-abort-grpc-request say. */
  readonly kind: 'http' | 'grpc' | 'header';
  /** The HTTP or gRPC status of `http` and `grpc`. */
  readonly status: number;
  readonly percentage: FractionalPercent;
}

export interface FaultRateLimit {
  /** fixed_limit's limit_kbps; null for header_limit (the request's x-proxy-fault-throughput-response). */
  readonly fixedKbps: number | null;
  readonly percentage: FractionalPercent;
}

/** The runtime keys that override a fault's settings (HTTPFault's *_runtime, Envoy's defaults). */
export interface FaultRuntimeKeys {
  readonly delayPercent: string;
  readonly abortPercent: string;
  readonly delayDuration: string;
  readonly abortHttpStatus: string;
  readonly abortGrpcStatus: string;
  readonly maxActiveFaults: string;
  readonly responseRateLimitPercent: string;
}

/** Each HTTP filter's model of a typed_per_filter_config entry (its descriptor's perRoute), by the filter's name. */
export interface PerRouteModels {
  'proxy.filters.http.csrf': CsrfPolicyConfig;
  'proxy.filters.http.local_ratelimit': LocalRateLimitConfig;
  'proxy.filters.http.fault': FaultConfig;
  'proxy.filters.http.buffer': BufferConfig;
  'proxy.filters.http.ratelimit': RateLimitPerRouteConfig;
  'proxy.filters.http.ext_authz': ExtAuthzPerRouteConfig;
}

export type PerRouteModel = PerRouteModels[keyof PerRouteModels];

/** A virtual host's, route's or weighted cluster's typed_per_filter_config: each filter's model, by its name in our spelling. */
export type PerFilterConfigs = { readonly [N in keyof PerRouteModels]?: PerRouteModels[N] };

/** A CsrfPolicy: proxy.filters.http.csrf's typed_config, and its per-route config. */
export interface CsrfPolicyConfig {
  /** filter_enabled (required): the share of requests whose origin is enforced. */
  readonly filterEnabled: RuntimeFraction;
  /** shadow_enabled: the share whose origin is judged and counted, not enforced; absent: none. */
  readonly shadowEnabled?: RuntimeFraction;
  /** additional_origins: source origins valid whatever the destination. */
  readonly additionalOrigins: readonly StringMatch[];
}

/** A LocalRateLimit: proxy.filters.http.local_ratelimit's typed_config, and its per-route config. */
export interface LocalRateLimitConfig {
  /** Its counters are `<statPrefix>.http_local_rate_limit.*`. */
  readonly statPrefix: string;
  /** The status of the reply to a request it limits: status.code when 400 or more, else 429. */
  readonly status: number;
  readonly tokenBucket: TokenBucketConfig;
  /** filter_enabled; absent: the filter does nothing (Envoy's default). */
  readonly filterEnabled?: RuntimeFraction;
  /** filter_enforced; absent: a request over the limit is only counted. */
  readonly filterEnforced?: RuntimeFraction;
  /**
   * response_headers_to_add, for the reply to a request it limits, as [name, value, ...]: names
   * in lower case, values literal text (validated), an `append: false` entry in place of the
   * earlier ones of its name, empty values left out (Envoy adds none).
   */
  readonly responseHeaders: readonly string[];
}

/** proxy.filters.http.ratelimit (Envoy 1.16's RateLimit), defaults filled in. */
export interface RateLimitFilterConfig {
  readonly domain: string;
  /** Only the route's and virtual host's rate_limits of this stage make descriptors. */
  readonly stage: number;
  /** Which requests it asks about, by the connection manager's internal request test. */
  readonly requestType: 'internal' | 'external' | 'both';
  /** timeout: how long a call may take (20 ms unless set; 0: no limit). */
  readonly timeoutMs: number;
  /** failure_mode_deny: a failed call answers 500 rather than letting the request go on. */
  readonly failureModeDeny: boolean;
  /** rate_limited_as_resource_exhausted: a limited gRPC request is answered RESOURCE_EXHAUSTED, not UNAVAILABLE. */
  readonly rateLimitedAsResourceExhausted: boolean;
  readonly service: RateLimitServiceConfig;
  /** enable_x_ratelimit_headers DRAFT_VERSION_03: the x-ratelimit-* headers on the response. */
  readonly xRateLimitHeaders: boolean;
}

/** config.ratelimit.v3.RateLimitServiceConfig: the service's envoy_grpc and which API it speaks. */
export interface RateLimitServiceConfig {
  readonly clusterName: string;
  /** grpc_service.initial_metadata, [name, value, ...], names in lower case. */
  readonly initialMetadata: readonly string[];
  /** transport_api_version: V3, else (AUTO, V2) v2's method, as Envoy 1.16 picks it. */
  readonly apiVersion: 'V2' | 'V3';
}

/** RateLimitPerRoute: how a route's rate_limits and its virtual host's combine (vh_rate_limits). */
export interface RateLimitPerRouteConfig {
  readonly vhRateLimits: 'OVERRIDE' | 'INCLUDE' | 'IGNORE';
}

/** route.v3.RateLimit: one descriptor, sent when every action gives its entry. */
export interface RateLimitPolicy {
  readonly stage: number;
  /** Runtime key `ratelimit.<disable_key>.http_filter_enabled` turns it off; '' for none. */
  readonly disableKey: string;
  readonly actions: readonly RateLimitAction[];
}

/** A RateLimit.Action, each the descriptor entry it adds (or its reason to make none). */
export type RateLimitAction =
  | { readonly kind: 'source_cluster' }
  | { readonly kind: 'destination_cluster' }
  /** The header's first value under descriptorKey; absent, no descriptor unless skipIfAbsent. Name in lower case. */
  | { readonly kind: 'request_headers'; readonly headerName: string; readonly descriptorKey: string; readonly skipIfAbsent: boolean }
  | { readonly kind: 'remote_address' }
  /** descriptorKey: `generic_key` unless set. */
  | { readonly kind: 'generic_key'; readonly descriptorKey: string; readonly descriptorValue: string }
  /** `header_match` = descriptorValue when the headers match as expectMatch says. */
  | { readonly kind: 'header_value_match'; readonly descriptorValue: string; readonly expectMatch: boolean; readonly headers: readonly HeaderMatch[] };

/** An ExtAuthz (proxy.filters.http.ext_authz's typed_config), Envoy 1.16's defaults filled in. */
export interface ExtAuthzConfig {
  readonly service: ExtAuthzHttpService | ExtAuthzGrpcService;
  /** An error of the service lets the request go on. */
  readonly failureModeAllow: boolean;
  /** with_request_body; null: the check carries no body. */
  readonly withRequestBody: { readonly maxRequestBytes: number; readonly allowPartialMessage: boolean } | null;
  /** An allowed request whose headers the service changed is routed again. */
  readonly clearRouteCache: boolean;
  /** The status of the reply to a request the check failed for (status_on_error; 403 unless an error status is set). */
  readonly statusOnError: number;
  /** The namespaces of the stream's dynamic metadata the check carries (in our spelling). */
  readonly metadataContextNamespaces: readonly string[];
  /** filter_enabled; absent: every request is checked. */
  readonly filterEnabled?: RuntimeFraction;
  /** deny_at_disable: a request the filter is disabled for is answered statusOnError; absent: it goes on. */
  readonly denyAtDisable?: RuntimeFeatureFlag;
  /** The source peer's certificate goes in the check, URL-encoded PEM. */
  readonly includePeerCertificate: boolean;
}

/** http_service: the check as a plain HTTP request (Envoy's RawHttpClientImpl). */
export interface ExtAuthzHttpService {
  readonly kind: 'http';
  /** server_uri.cluster. */
  readonly cluster: string;
  readonly timeoutMs: number;
  /** As UTF-8 bytes, the start of the check's path. */
  readonly pathPrefix: string;
  /** authorization_request.allowed_headers: the request headers sent besides Envoy's own few. */
  readonly allowedHeaders: readonly StringMatch[];
  /** authorization_request.headers_to_add as [name, value, ...], names in lower case, literal values. */
  readonly headersToAdd: readonly string[];
  readonly allowedUpstreamHeaders: readonly StringMatch[];
  readonly allowedUpstreamHeadersToAppend: readonly StringMatch[];
  /** Empty: every header of a denial but Host reaches the client. */
  readonly allowedClientHeaders: readonly StringMatch[];
}

/** grpc_service (envoy_grpc): the Authorization service's Check. */
export interface ExtAuthzGrpcService {
  readonly kind: 'grpc';
  readonly clusterName: string;
  /** grpc_service.timeout; Envoy's 200 ms when unset. */
  readonly timeoutMs: number;
  /** transport_api_version: V2 (AUTO's meaning in 1.16) or V3. */
  readonly apiVersion: 'V2' | 'V3';
}

/** An ExtAuthzPerRoute entry. */
export interface ExtAuthzPerRouteConfig {
  readonly disabled: boolean;
  /** check_settings.context_extensions. */
  readonly contextExtensions: Readonly<Record<string, string>>;
}

/** core.v3.RuntimeFeatureFlag: the runtime boolean at runtimeKey overrides the default. */
export interface RuntimeFeatureFlag {
  readonly defaultValue: boolean;
  readonly runtimeKey: string;
}

/** type.v3.TokenBucket. */
export interface TokenBucketConfig {
  /** Also the tokens it starts with. */
  readonly maxTokens: number;
  readonly tokensPerFill: number;
  /** 0: never filled (a config without token_bucket: Envoy's bucket of no tokens). */
  readonly fillIntervalMs: number;
}

/**
 * An access_log entry of the HTTP connection manager or the TCP proxy: the logger by its
 * registered name (`proxy.access_loggers.file`). Each logger's descriptor builds its model, which
 * extends this with the logger's settings.
 */
export interface AccessLogConfig {
  readonly name: string;
}

/** proxy.filters.http.health_check (HealthCheck), defaults filled in. */
export interface HealthCheckConfig {
  readonly passThroughMode: boolean;
  /** How long an upstream answer to a health check is reused; 0: never (pass-through only). */
  readonly cacheTimeMs: number;
  /** Cluster name -> percentage (0..100) of hosts that must be healthy or degraded; empty in pass-through mode, as Envoy ignores it there. */
  readonly clusterMinHealthyPercentages: Readonly<Record<string, number>>;
  /** A request is a health check when it matches all of them. */
  readonly headers: readonly HeaderMatch[];
}

/**
 * proxy.filters.http.compressor (Compressor), or the deprecated proxy.filters.http.gzip (Gzip and
 * its `compressor`), with Envoy 1.16's defaults filled in.
 */
export interface CompressorConfig {
  /** Its counters' scope under `http.<stat_prefix>`: `compressor.<library name>.gzip`, or `gzip` for the gzip filter. */
  readonly statPrefix: string;
  /** content_length: the least Content-Length compressed (30 when unset or 0). */
  readonly minContentLength: number;
  /** content_type in lower case: the media types compressed (Envoy's list of text types when unset). */
  readonly contentTypes: readonly string[];
  readonly disableOnEtagHeader: boolean;
  readonly removeAcceptEncodingHeader: boolean;
  /** runtime_enabled; absent: always on. */
  readonly runtimeEnabled?: RuntimeFeatureFlag;
  readonly gzip: GzipCompressionConfig;
}

/** core.v3.RuntimeFeatureFlag: the runtime value at runtimeKey, as a boolean, overrides the default. */
export interface RuntimeFeatureFlag {
  readonly runtimeKey: string;
  readonly defaultValue: boolean;
}

/** The zlib parameters of a gzip compressor (compression.gzip.compressor.v3.Gzip, or the gzip filter's own fields). */
export interface GzipCompressionConfig {
  /** 1..9, or -1 for zlib's default (6). */
  readonly level: number;
  /** zlib's strategy constant: 0 default, 1 filtered, 2 Huffman only, 3 RLE, 4 fixed. */
  readonly strategy: number;
  /** 1..9 (default 5). */
  readonly memoryLevel: number;
  /** 9..15 (default 12): the base two logarithm of the window. */
  readonly windowBits: number;
  /** zlib's output buffer size, 4096..65536 (default 4096). */
  readonly chunkSize: number;
}

/** proxy.filters.http.buffer's Buffer, or a route's BufferPerRoute. */
export interface BufferConfig {
  /** BufferPerRoute's `disabled`: the route's requests go on unbuffered. */
  readonly disabled: boolean;
  /** max_request_bytes (required): a request body over it is answered 413. */
  readonly maxRequestBytes: number;
}

/** A route.v3.HeaderMatcher of the kinds this build runs. */
export interface HeaderMatch {
  /** Lower case; `:path`, `:method` and `:authority` name the request line and host. */
  readonly name: string;
  readonly invert: boolean;
  readonly specifier:
    | { readonly kind: 'exact' | 'prefix' | 'suffix'; readonly value: string }
    /** RE2 syntax, matched against the whole value. */
    | { readonly kind: 'safe_regex'; readonly regex: string }
    /** [start, end) of int64s in decimal (strings: beyond 2^53 a number would round). */
    | { readonly kind: 'range'; readonly start: string; readonly end: string }
    | { readonly kind: 'present' };
}

/** A connection manager's `rds`: a RouteConfiguration by name from a config source. */
export interface RdsConfig {
  readonly configSource: ConfigSourceConfig;
  readonly routeConfigName: string;
}

export interface RouteConfiguration {
  readonly name: string;
  readonly virtualHosts: readonly VirtualHost[];
  readonly requestHeaders?: HeaderMutations;
  readonly responseHeaders?: HeaderMutations;
  /** The route's mutations apply last, so that they win; by default the route configuration's do. */
  readonly mostSpecificHeaderMutationsWins?: true;
  /** internal_only_headers, lower case: removed from requests that do not come from inside; absent when none. */
  readonly internalOnlyHeaders?: readonly string[];
}

/** One level's `*_headers_to_add` and `*_headers_to_remove`; absent where a level has neither. */
export interface HeaderMutations {
  readonly add: readonly HeaderValueOption[];
  /** Lower case. */
  readonly remove: readonly string[];
}

export interface HeaderValueOption {
  /** Lower case. */
  readonly name: string;
  /** Envoy's custom header format: literal text, `%%` for `%`, and `%VARIABLE%` or `%VARIABLE(args)%`. */
  readonly value: string;
  /** Add a value (true, the default) or replace the header's values. */
  readonly append: boolean;
}

export interface VirtualHost {
  readonly name: string;
  /** rate_limits: descriptors of the rate limit filter for its routes; absent when none. */
  readonly rateLimits?: readonly RateLimitPolicy[];
  /** Exact, `*.suffix`, `prefix*` or `*`, lower-cased; Envoy's precedence applies. */
  readonly domains: readonly string[];
  readonly routes: readonly Route[];
  /** require_tls: which requests not made over https are redirected to it. */
  readonly requireTls: TlsRequirement;
  readonly requestHeaders?: HeaderMutations;
  readonly responseHeaders?: HeaderMutations;
  /** include_request_attempt_count: each try tells the upstream its number in x-proxy-attempt-count. */
  readonly includeRequestAttemptCount?: true;
  /** include_attempt_count_in_response: the response tells the client how many tries it took. */
  readonly includeAttemptCountInResponse?: true;
  /** virtual_clusters, in order; absent when there are none. */
  readonly virtualClusters?: readonly VirtualCluster[];
  /** The CORS policy of its routes that have none of their own; absent when it has none. */
  readonly cors?: CorsPolicy;
  /** typed_per_filter_config; absent when it has none. */
  readonly perFilterConfig?: PerFilterConfigs;
}

/**
 * A route.v3.CorsPolicy, which proxy.filters.http.cors enforces: the route's, else its virtual
 * host's. Header lists stay the comma-separated text the configuration gives.
 */
export interface CorsPolicy {
  /** allow_origin_string_match (v2's allow_origin as exact matches). */
  readonly allowOrigins: readonly StringMatch[];
  readonly allowMethods: string;
  readonly allowHeaders: string;
  readonly exposeHeaders: string;
  readonly maxAge: string;
  /** allow_credentials; absent when unset, so that a less specific policy's applies. */
  readonly allowCredentials?: boolean;
  /** filter_enabled (v2's enabled as a fixed fraction); absent: always. */
  readonly filterEnabled?: RuntimeFraction;
  /** shadow_enabled: origins are judged and counted but nothing is enforced; absent: never. */
  readonly shadowEnabled?: RuntimeFraction;
}

/** A route.v3.VirtualCluster: requests matching every header matcher are counted under its name. */
export interface VirtualCluster {
  readonly name: string;
  /** At least one (Envoy refuses a virtual cluster without). */
  readonly headers: readonly HeaderMatch[];
}

export type TlsRequirement = 'NONE' | 'EXTERNAL_ONLY' | 'ALL';

export interface RouteMatch {
  /** Exactly one of prefix/path/safeRegex/connect is set; prefix and path as UTF-8 bytes (src/common/byte_string.ts). */
  readonly prefix?: string;
  readonly path?: string;
  /** RE2 syntax, matched against the whole path before its query string. */
  readonly safeRegex?: string;
  /** For prefix and path; a regex says its own case rules. */
  readonly caseSensitive: boolean;
  /** The route matches only this fraction of requests (decided per request). */
  readonly runtimeFraction?: RuntimeFraction;
  /** The request matches every one. */
  readonly headers: readonly HeaderMatch[];
  readonly queryParameters: readonly QueryParameterMatch[];
  /** Only gRPC requests: content-type application/grpc, or application/grpc+ and a codec name. */
  readonly grpc: boolean;
  /** connect_matcher: only CONNECT requests (which no other path specifier matches, having no path). */
  readonly connect?: true;
  /** tls_context: each set field must equal the downstream's certificate fact. */
  readonly tlsContext?: TlsContextMatch;
}

/** Whether the downstream presented a client certificate, and whether it was validated. */
export interface TlsContextMatch {
  readonly presented?: boolean;
  readonly validated?: boolean;
}

/** A query parameter present in the request's path, its first value matching `value` unless null. */
export interface QueryParameterMatch {
  readonly name: string;
  /** Null: the parameter's presence is enough (present_match, or no string_match). */
  readonly value: StringMatch | null;
}

export type PercentDenominator = 'HUNDRED' | 'TEN_THOUSAND' | 'MILLION';

export interface FractionalPercent {
  readonly numerator: number;
  readonly denominator: PercentDenominator;
}

/** core.v3.RuntimeFractionalPercent: the runtime value at runtimeKey overrides the default. */
export interface RuntimeFraction {
  readonly defaultValue: FractionalPercent;
  readonly runtimeKey: string;
}

export type RouteAction = ClusterRouteAction | DirectResponseAction | RedirectAction;

export interface ClusterRouteAction {
  readonly kind: 'route';
  /** The upstream cluster; '' when weightedClusters or clusterHeader picks one per request. */
  readonly cluster: string;
  /** cluster_header, lower case: the request header naming the cluster (absent: no cluster). */
  readonly clusterHeader?: string;
  /** cluster_not_found_response_code: 404 when NOT_FOUND; absent: 503. */
  readonly clusterNotFoundStatus?: number;
  readonly weightedClusters?: WeightedClusters;
  /** Whole-response timeout; 0 disables. Envoy's default is 15 s. */
  readonly timeoutMs: number;
  /** max_grpc_timeout: a gRPC request's timeout is its grpc-timeout, capped by this (0: no cap); absent: the route's timeout applies. */
  readonly maxGrpcTimeoutMs?: number;
  /** grpc_timeout_offset: taken off the grpc-timeout first, when that leaves more than 0. */
  readonly grpcTimeoutOffsetMs?: number;
  /** idle_timeout: replaces the connection manager's stream_idle_timeout for the stream (0 disables); absent: it stands. */
  readonly idleTimeoutMs?: number;
  /** prefix_rewrite, as UTF-8 bytes. */
  readonly prefixRewrite?: string;
  /** regex_rewrite: the path before its query, rewritten; absent when none. */
  readonly regexRewrite?: RegexMatchAndSubstitute;
  /** host_rewrite_literal, as UTF-8 bytes. */
  readonly hostRewriteLiteral?: string;
  /** host_rewrite_path_regex: the upstream authority made from the path before its query. */
  readonly hostRewritePathRegex?: RegexMatchAndSubstitute;
  /** host_rewrite_header, lower case: its value, when the request has a non-empty one, is the upstream authority. */
  readonly hostRewriteHeader?: string;
  /** auto_host_rewrite: the chosen host's hostname, when it has one, is the upstream authority. */
  readonly autoHostRewrite?: true;
  /** hash_policy, in order; absent when the route has none that can yield a hash. */
  readonly hashPolicies?: readonly HashPolicy[];
  /** metadata_match's `proxy.lb` fields; absent when it has none. */
  readonly metadataMatch?: MetadataMatchCriteria;
  /** The circuit breakers (and connection pools) the route's requests count against. */
  readonly priority: RoutingPriority;
  /** The route's retry_policy, else its virtual host's; absent when neither has one. */
  readonly retryPolicy?: RetryPolicy;
  /** upgrade_configs: upgrade types the route enables or disables over the connection manager's; absent when none. */
  readonly upgrades?: UpgradeSwitches;
  /**
   * The CONNECT upgrade config has a connect_config: a CONNECT request is terminated here, its
   * payload going to the host over TCP; absent when CONNECT requests are proxied as they are.
   */
  readonly terminateConnect?: true;
  /** The route's own CORS policy; absent when it has none. */
  readonly cors?: CorsPolicy;
  /** request_mirror_policies: the clusters that get a copy of each request; absent when none. */
  readonly mirrorPolicies?: readonly MirrorPolicy[];
  /** internal_redirect_policy (or the deprecated internal_redirect_action HANDLE_INTERNAL_REDIRECT); absent: 3xx pass through. */
  readonly internalRedirectPolicy?: InternalRedirectPolicy;
  /** rate_limits: descriptors of the rate limit filter; absent when none. */
  readonly rateLimits?: readonly RateLimitPolicy[];
  /** include_vh_rate_limits: the virtual host's rate_limits count too, whatever the route's. */
  readonly includeVhRateLimits?: true;
}

/** RouteAction.internal_redirect_policy: which upstream redirects the proxy follows itself. */
export interface InternalRedirectPolicy {
  /** Redirects one downstream request may have taken before this route follows another; 1 unless set. */
  readonly maxInternalRedirects: number;
  /** Among 301, 302, 303, 307 and 308 (Envoy drops any other); [302] unless set. */
  readonly redirectResponseCodes: readonly number[];
  /** A Location whose scheme differs from the request's x-forwarded-proto may be followed. */
  readonly allowCrossSchemeRedirect: boolean;
  /** In order; any may refuse the route a redirect leads to. */
  readonly predicates: readonly InternalRedirectPredicateConfig[];
}

/** An internal redirect predicate, by its registered name. */
export type InternalRedirectPredicateConfig =
  /** The target route must be one of these (by route name). */
  | { readonly name: 'proxy.internal_redirect_predicates.allow_listed_routes'; readonly allowedRouteNames: readonly string[] }
  /** A route may redirect to a given route once per downstream request. */
  | { readonly name: 'proxy.internal_redirect_predicates.previous_routes' }
  /** An http request may not be redirected to https (https to http may). */
  | { readonly name: 'proxy.internal_redirect_predicates.safe_cross_scheme' };

/** type.matcher.v3.RegexMatchAndSubstitute: every match of `regex` replaced by `substitution`. */
export interface RegexMatchAndSubstitute {
  /** RE2 syntax, validated (program size included). */
  readonly regex: string;
  /** RE2's rewrite syntax: `\1` inserts a capture group, `\\` a backslash. */
  readonly substitution: string;
}

/** RouteAction.RequestMirrorPolicy. */
export interface MirrorPolicy {
  readonly cluster: string;
  /** Only this fraction of requests is mirrored; absent: every one. */
  readonly runtimeFraction?: RuntimeFraction;
}

/** A retry_host_predicate entry, by its registered name. */
export interface RetryHostPredicateConfig {
  readonly name: string;
}

/** RetryPolicy (route or virtual host). */
export interface RetryPolicy {
  /** retry_on's conditions, as RETRY_ON_* flags (src/filters/http/retry_on.ts). */
  readonly retryOn: number;
  /** num_retries; 1 when unset, as in Envoy. */
  readonly numRetries: number;
  /** per_try_timeout; 0 when unset (each try has the route's whole timeout). */
  readonly perTryTimeoutMs: number;
  readonly retriableStatusCodes: readonly number[];
  /** retry_host_predicate has previous_hosts: a retry avoids the hosts already tried. */
  readonly avoidPreviousHosts: boolean;
  /** host_selection_retry_max_attempts: how many more picks a retry may make to avoid them. */
  readonly hostSelectionRetryMaxAttempts: number;
  /** retry_back_off.base_interval: 25 ms unless set, at least 1 ms. */
  readonly baseIntervalMs: number;
  /** retry_back_off.max_interval: 10 x the base interval unless set. */
  readonly maxIntervalMs: number;
}

/** RouteAction.WeightedCluster: one cluster per request, by weight. */
export interface WeightedClusters {
  readonly clusters: readonly WeightedCluster[];
  /** The configured weights sum to it (validated); 100 by default. */
  readonly totalWeight: number;
}

export interface WeightedCluster {
  readonly name: string;
  readonly weight: number;
  /** `<runtime_key_prefix>.<name>`, as Envoy builds it (even with no prefix): the runtime value there overrides `weight`. */
  readonly runtimeKey: string;
  /** The route's criteria merged with the entry's own; absent when neither has any. */
  readonly metadataMatch?: MetadataMatchCriteria;
  readonly requestHeaders?: HeaderMutations;
  readonly responseHeaders?: HeaderMutations;
  /** typed_per_filter_config; absent when it has none. */
  readonly perFilterConfig?: PerFilterConfigs;
}

/** RouteAction.HashPolicy; `terminal` stops the evaluation once a hash exists. */
export type HashPolicy = { readonly terminal: boolean } & (
  | { readonly kind: 'header'; /** Lower case; `:path`, `:method`, `:authority` as in HeaderMatch. */ readonly name: string }
  /** A cookie; when absent and ttlSeconds is set, the router makes one (0: a session cookie). */
  | { readonly kind: 'cookie'; readonly name: string; readonly ttlSeconds: number | null; readonly path: string }
  /** connection_properties.source_ip. */
  | { readonly kind: 'source_ip' }
  | { readonly kind: 'query_parameter'; readonly name: string }
  | { readonly kind: 'filter_state'; readonly key: string }
);

export interface DirectResponseAction {
  readonly kind: 'direct_response';
  readonly status: number;
  /** inline_string; '' when the body is a file's. */
  readonly body: string;
  /** body.filename, read when the route table is built (at most 4 KiB, as in Envoy); null: inline. */
  readonly bodyFile: string | null;
}

/** Envoy 1.16's RedirectAction: each null part keeps the request's own; host and paths as UTF-8 bytes. */
export interface RedirectAction {
  readonly kind: 'redirect';
  /** scheme_redirect, or `https` for https_redirect. */
  readonly scheme: string | null;
  readonly host: string | null;
  readonly port: number | null;
  /** path_redirect: the whole path, its own query (if it has one) kept whatever strip_query says. */
  readonly path: string | null;
  /** prefix_rewrite: replaces what the route's match covered. */
  readonly prefixRewrite: string | null;
  /** 301, 302, 303, 307 or 308. */
  readonly status: number;
  readonly stripQuery: boolean;
}

export interface Route {
  readonly name: string;
  readonly match: RouteMatch;
  readonly action: RouteAction;
  readonly requestHeaders?: HeaderMutations;
  readonly responseHeaders?: HeaderMutations;
  /** typed_per_filter_config; absent when it has none. */
  readonly perFilterConfig?: PerFilterConfigs;
  /** The route's own tracing sampling and custom tags, in place of the connection manager's. */
  readonly tracing?: RouteTracingConfig;
  /** The span's operation name on this route, and whether it travels in x-proxy-decorator-operation. */
  readonly decorator?: DecoratorConfig;
}

// ---- tracing -----------------------------------------------------------------------------

/**
 * The connection manager's `tracing`, Envoy 1.16's defaults filled in: each sampling a
 * FractionalPercent as Envoy turns the Percent into one (random_sampling out of 10,000).
 */
export interface HttpTracingConfig {
  readonly clientSampling: FractionalPercent;
  readonly randomSampling: FractionalPercent;
  readonly overallSampling: FractionalPercent;
  /** Spans carry the stream's timing events as annotations. */
  readonly verbose: boolean;
  /** The longest path the http.url tag keeps (default 256). */
  readonly maxPathTagLength: number;
  readonly customTags: readonly CustomTagConfig[];
  /** provider: this connection manager's own tracer; null: the bootstrap's tracing.http, if any. */
  readonly provider: TracerConfig | null;
}

/** route.v3.Tracing: replaces the connection manager's samplings for the route; its tags win over the manager's. */
export interface RouteTracingConfig {
  readonly clientSampling: FractionalPercent;
  readonly randomSampling: FractionalPercent;
  readonly overallSampling: FractionalPercent;
  readonly customTags: readonly CustomTagConfig[];
}

export interface DecoratorConfig {
  readonly operation: string;
  /** propagate (default true): the operation travels in x-proxy-decorator-operation. */
  readonly propagate: boolean;
}

/** type.tracing.v3.CustomTag, less metadata (refused). */
export type CustomTagConfig =
  | { readonly tag: string; readonly kind: 'literal'; readonly value: string }
  | { readonly tag: string; readonly kind: 'environment'; readonly name: string; readonly defaultValue: string }
  | { readonly tag: string; readonly kind: 'request_header'; readonly name: string; readonly defaultValue: string };

/** A tracer (Envoy's tracing provider, `proxy.tracers`), as Bootstrap.tracing.http or a connection manager's provider names it. */
export type TracerConfig = ZipkinTracerConfig;

/** config.trace.v3.ZipkinConfig, collector_endpoint_version HTTP_JSON (the one this build sends). */
export interface ZipkinTracerConfig {
  readonly kind: 'zipkin';
  readonly name: string;
  readonly collectorCluster: string;
  readonly collectorEndpoint: string;
  /** The collector request's host: collector_hostname, else the cluster's name. */
  readonly collectorHostname: string;
  readonly traceId128Bit: boolean;
  /** shared_span_context (default true): a server span takes the id of the span that called it. */
  readonly sharedSpanContext: boolean;
}

// ---- clusters ----------------------------------------------------------------------------

export type DiscoveryType = 'STATIC' | 'STRICT_DNS' | 'LOGICAL_DNS' | 'EDS' | 'ORIGINAL_DST';

export type LbPolicy =
  | 'ROUND_ROBIN'
  | 'LEAST_REQUEST'
  | 'RING_HASH'
  | 'RANDOM'
  | 'MAGLEV'
  | 'CLUSTER_PROVIDED';

export type EndpointHealthStatus = 'UNKNOWN' | 'HEALTHY' | 'UNHEALTHY' | 'DRAINING' | 'TIMEOUT' | 'DEGRADED';

export interface LbEndpoint {
  readonly address: SocketAddress;
  readonly hostname: string;
  readonly healthStatus: EndpointHealthStatus;
  /** 1..2^32-1 (the proto's uint32); default 1. */
  readonly loadBalancingWeight: number;
  readonly metadata: Readonly<Record<string, unknown>>;
}

export interface LocalityLbEndpoints {
  readonly locality: Locality;
  readonly priority: number;
  /** 0 when unset. */
  readonly loadBalancingWeight: number;
  readonly lbEndpoints: readonly LbEndpoint[];
}

export interface ClusterLoadAssignment {
  readonly clusterName: string;
  readonly endpoints: readonly LocalityLbEndpoints[];
  readonly policy: LoadAssignmentPolicy;
}

/** Envoy's kDefaultOverProvisioningFactor (1.4), in percent: a load assignment's when it sets none. */
export const DEFAULT_OVERPROVISIONING_FACTOR = 140;

/** ClusterLoadAssignment.Policy, Envoy's defaults filled in. */
export interface LoadAssignmentPolicy {
  /** overprovisioning_factor, in percent: DEFAULT_OVERPROVISIONING_FACTOR when unset. */
  readonly overprovisioningFactor: number;
  /** The one drop_overloads category's drop_percentage (validation allows one, as Envoy); null: none. */
  readonly dropOverload: FractionalPercent | null;
  /** endpoint_stale_after in ms (EDS); null: the endpoints never go stale. */
  readonly endpointStaleAfterMs: number | null;
}

/**
 * core.v3.TransportSocket of a cluster: plaintext (`proxy.transport_sockets.raw_buffer`), TLS
 * (`proxy.transport_sockets.tls` with an UpstreamTlsContext), or a PROXY protocol header ahead
 * of another one (`proxy.transport_sockets.upstream_proxy_protocol`).
 */
export type TransportSocketConfig =
  | { readonly kind: 'raw_buffer' }
  | { readonly kind: 'tls'; readonly context: UpstreamTlsContextConfig }
  | UpstreamProxyProtocolConfig;

/** ProxyProtocolUpstreamTransport: the header's version, and the transport socket it wraps. */
export interface UpstreamProxyProtocolConfig {
  readonly kind: 'upstream_proxy_protocol';
  readonly version: 'V1' | 'V2';
  readonly transportSocket: TransportSocketConfig;
}

/** A listener filter chain's transport socket: plaintext, or TLS with a DownstreamTlsContext. */
export type DownstreamTransportSocketConfig =
  | { readonly kind: 'raw_buffer' }
  | { readonly kind: 'tls'; readonly context: DownstreamTlsContextConfig };

/** core.v3.DataSource: a file (read when the context is built, and watched) or bytes in the config. */
export type DataSource = { readonly kind: 'file'; readonly path: string } | { readonly kind: 'inline'; readonly bytes: Buffer };

/** tls.v3.TlsCertificate: a certificate chain and its private key. */
export interface TlsCertificateConfig {
  readonly certificateChain: DataSource;
  readonly privateKey: DataSource;
  readonly password: DataSource | null;
}

/** tls.v3.CertificateValidationContext, the fields this build acts on. */
export interface CertificateValidationContextConfig {
  /** PEM bundle of trusted CAs; null: the peer's certificate chain is not verified. */
  readonly trustedCa: DataSource | null;
  readonly matchSubjectAltNames: readonly StringMatch[];
  /** Base64 SHA-256 of the SubjectPublicKeyInfo, as Envoy takes them. */
  readonly verifyCertificateSpki: readonly string[];
  /** Hex SHA-256 of the DER certificate, lower case, colons removed. */
  readonly verifyCertificateHash: readonly string[];
  readonly crl: DataSource | null;
  readonly allowExpiredCertificate: boolean;
}

export type TlsProtocolVersion = 'TLS_AUTO' | 'TLSv1_0' | 'TLSv1_1' | 'TLSv1_2' | 'TLSv1_3';

/** tls.v3.TlsParameters. */
export interface TlsParameters {
  readonly minimumProtocolVersion: TlsProtocolVersion;
  readonly maximumProtocolVersion: TlsProtocolVersion;
  /** OpenSSL cipher names; empty: Envoy's default list for the side. */
  readonly cipherSuites: readonly string[];
  readonly ecdhCurves: readonly string[];
}

/** tls.v3.CommonTlsContext. */
export interface CommonTlsContextConfig {
  readonly tlsParams: TlsParameters;
  readonly tlsCertificates: readonly TlsCertificateConfig[];
  /** tls_certificate_sds_secret_configs: used when tlsCertificates is empty, as in Envoy. */
  readonly tlsCertificateSdsSecretConfigs: readonly SdsSecretConfig[];
  /** validation_context, or combined_validation_context's default_validation_context. */
  readonly validationContext: CertificateValidationContextConfig | null;
  /**
   * validation_context_sds_secret_config, or combined_validation_context's: with a
   * validationContext too (combined), the secret is merged into it.
   */
  readonly validationContextSdsSecretConfig: SdsSecretConfig | null;
  readonly alpnProtocols: readonly string[];
}

/** tls.v3.SdsSecretConfig: a secret by name, from static_resources.secrets when sdsConfig is null. */
export interface SdsSecretConfig {
  readonly name: string;
  readonly sdsConfig: ConfigSourceConfig | null;
}

/** What a tls.v3.Secret holds, of the kinds this build takes. */
export type SecretValue =
  | { readonly kind: 'tls_certificate'; readonly tlsCertificate: TlsCertificateConfig }
  | { readonly kind: 'validation_context'; readonly validationContext: CertificateValidationContextConfig };

/** tls.v3.Secret. */
export interface SecretConfig {
  readonly name: string;
  readonly value: SecretValue;
}

/** tls.v3.UpstreamTlsContext. */
export interface UpstreamTlsContextConfig {
  readonly common: CommonTlsContextConfig;
  /** '' sends no SNI. */
  readonly sni: string;
  readonly allowRenegotiation: boolean;
  /** How many TLS sessions are kept for resumption; 0 disables resumption. */
  readonly maxSessionKeys: number;
}

/** tls.v3.DownstreamTlsContext. */
export interface DownstreamTlsContextConfig {
  readonly common: CommonTlsContextConfig;
  readonly requireClientCertificate: boolean;
  readonly requireSni: boolean;
}

/** core.v3.UpstreamHttpProtocolOptions. */
export interface UpstreamHttpProtocolOptions {
  /** The request's host (after host rewriting) is the SNI of its upstream connection. */
  readonly autoSni: boolean;
  /** That host must also be a SAN of the upstream's certificate. */
  readonly autoSanValidation: boolean;
}

/** Cluster.TransportSocketMatch: endpoints whose `proxy.transport_socket_match` metadata holds `match` use `transportSocket`. */
export interface TransportSocketMatch {
  readonly name: string;
  /** The Struct as JSON; empty matches any endpoint. */
  readonly match: Readonly<Record<string, unknown>>;
  readonly transportSocket: TransportSocketConfig | null;
}

/** Cluster.RefreshRate, in milliseconds. */
export interface RefreshRate {
  readonly baseMs: number;
  /** 10 x baseMs when unset. */
  readonly maxMs: number;
}

export type DnsLookupFamily = 'AUTO' | 'V4_ONLY' | 'V6_ONLY';

export type LbSubsetFallbackPolicy = 'NO_FALLBACK' | 'ANY_ENDPOINT' | 'DEFAULT_SUBSET';

export interface LbSubsetSelector {
  readonly keys: readonly string[];
  /** NOT_DEFINED defers to the config's fallbackPolicy. */
  readonly fallbackPolicy: 'NOT_DEFINED' | LbSubsetFallbackPolicy | 'KEYS_SUBSET';
  /** Non-empty, a strict subset of keys, exactly when fallbackPolicy is KEYS_SUBSET (validated). */
  readonly fallbackKeysSubset: readonly string[];
}

/** Cluster.LbSubsetConfig, defaults filled in. */
export interface LbSubsetConfig {
  readonly fallbackPolicy: LbSubsetFallbackPolicy;
  /** The Struct as JSON, matched under the `proxy.lb` metadata namespace. */
  readonly defaultSubset: Readonly<Record<string, unknown>>;
  readonly subsetSelectors: readonly LbSubsetSelector[];
  readonly localityWeightAware: boolean;
  readonly scaleLocalityWeight: boolean;
  readonly panicModeAny: boolean;
  readonly listAsAny: boolean;
}

/** Cluster.RingHashLbConfig, defaults filled in (read when lbPolicy is RING_HASH). */
export interface RingHashLbConfig {
  readonly minimumRingSize: number;
  readonly maximumRingSize: number;
  readonly hashFunction: 'XX_HASH' | 'MURMUR_HASH_2';
}

/** Cluster.MaglevLbConfig, defaults filled in (read when lbPolicy is MAGLEV). */
export interface MaglevLbConfig {
  /** A prime; 65537 by default. */
  readonly tableSize: number;
}

/** core.v3.RuntimeDouble: the runtime value at runtimeKey, if it reads as a number, overrides the default. */
export interface RuntimeDouble {
  readonly defaultValue: number;
  readonly runtimeKey: string;
}

/** Cluster.LeastRequestLbConfig, defaults filled in (read when lbPolicy is LEAST_REQUEST). */
export interface LeastRequestLbConfig {
  /** At least 2 (a proto rule). */
  readonly choiceCount: number;
  /** null when unset: the bias is 1.0. */
  readonly activeRequestBias: RuntimeDouble | null;
}

/** Envoy's RoutingPriority: circuit breakers keep separate counts per priority. */
export type RoutingPriority = 'DEFAULT' | 'HIGH';

/** CircuitBreakers.Thresholds of one priority, Envoy's defaults filled in. */
export interface CircuitBreakerThresholds {
  readonly maxConnections: number;
  readonly maxPendingRequests: number;
  readonly maxRequests: number;
  readonly maxRetries: number;
  /** Unlimited (2^32 - 1) unless set. */
  readonly maxConnectionPools: number;
  /** track_remaining: publish the remaining_* gauges. */
  readonly trackRemaining: boolean;
  /** retry_budget: replaces maxRetries with a share of the active requests. */
  readonly retryBudget: RetryBudget | null;
}

export interface RetryBudget {
  /** Percent of active plus pending requests that may be retries (default 20). */
  readonly budgetPercent: number;
  /** Retries always allowed whatever the budget (default 3). */
  readonly minRetryConcurrency: number;
}

/** circuit_breakers: the thresholds of both priorities (Envoy's defaults for one left unset). */
export interface CircuitBreakers {
  readonly DEFAULT: CircuitBreakerThresholds;
  readonly HIGH: CircuitBreakerThresholds;
}

/**
 * Cluster.OutlierDetection, Envoy 1.16's defaults filled in. Durations in ms, `enforcing*` and
 * thresholds in whole percent; runtime `outlier_detection.<field>` overrides each at its use.
 */
export interface OutlierDetection {
  readonly consecutive5xx: number;
  readonly consecutiveGatewayFailure: number;
  readonly consecutiveLocalOriginFailure: number;
  readonly intervalMs: number;
  readonly baseEjectionTimeMs: number;
  readonly maxEjectionPercent: number;
  readonly enforcingConsecutive5xx: number;
  readonly enforcingConsecutiveGatewayFailure: number;
  readonly enforcingConsecutiveLocalOriginFailure: number;
  readonly enforcingSuccessRate: number;
  readonly enforcingLocalOriginSuccessRate: number;
  readonly enforcingFailurePercentage: number;
  readonly enforcingFailurePercentageLocalOrigin: number;
  readonly successRateMinimumHosts: number;
  readonly successRateRequestVolume: number;
  /** Thousandths: 1900 is a factor of 1.9. */
  readonly successRateStdevFactor: number;
  readonly failurePercentageThreshold: number;
  readonly failurePercentageMinimumHosts: number;
  readonly failurePercentageRequestVolume: number;
  /** Connection failures and timeouts count apart from the upstream's own answers. */
  readonly splitExternalLocalOriginErrors: boolean;
}

/** Cluster.CommonLbConfig, defaults filled in. */
export interface CommonLbConfig {
  /** Whole percent (truncated), 0..100; 0 disables panic mode. */
  readonly healthyPanicThreshold: number;
  /** Zone aware routing settings; Envoy's defaults apply when zone_aware_lb_config is unset. */
  readonly zoneAware: {
    /** Whole percent of requests considered for zone aware routing. */
    readonly routingEnabled: number;
    readonly minClusterSize: number;
    readonly failTrafficOnPanic: boolean;
  };
  /** locality_weighted_lb_config is set (the one-of excludes zone_aware_lb_config). */
  readonly localityWeighted: boolean;
  /** 0 disables merging. */
  readonly updateMergeWindowMs: number;
  readonly ignoreNewHostsUntilFirstHc: boolean;
  readonly useHostnameForHashing: boolean;
}

export type ClusterProtocolSelection = 'USE_CONFIGURED_PROTOCOL' | 'USE_DOWNSTREAM_PROTOCOL';

/**
 * A message this build carries but does not model yet (outlier detection, protocol options,
 * cluster types' typed configs): its decoded v3 JSON, for the issue that implements it to read.
 */
export type UnmodelledMessage = Readonly<Record<string, unknown>>;

/** A custom cluster type (cluster_type): its registered name and its typed_config, which the type reads. */
export interface ClusterTypeConfig {
  readonly name: string;
  readonly typedConfig: UnmodelledMessage;
}

export interface ClusterConfig {
  readonly name: string;
  /** alt_stat_name, or name, with every `:` replaced by `_`. */
  readonly statName: string;
  /** STATIC when cluster_type is set instead (the two are a one-of). */
  readonly type: DiscoveryType;
  /** cluster_type: a cluster type by its registered name, with its typed_config. */
  readonly clusterType: ClusterTypeConfig | null;
  /** Set only on EDS clusters (validated); serviceName is the cluster's name when the config leaves it empty. */
  readonly edsClusterConfig: { readonly edsConfig: ConfigSourceConfig; readonly serviceName: string } | null;
  readonly connectTimeoutMs: number;
  readonly lbPolicy: LbPolicy;
  readonly perConnectionBufferLimitBytes: number;
  /** 0 means no limit. */
  readonly maxRequestsPerConnection: number;
  /** load_assignment, or the v2 `hosts` upgraded into one. */
  readonly loadAssignment: ClusterLoadAssignment;
  /** upstream_bind_config.source_address: where upstream connections come from (port 0: any). */
  readonly upstreamBindConfig: SocketAddress | null;
  /** upstream_connection_options.tcp_keepalive; null when unset (no keepalive). */
  readonly tcpKeepalive: TcpKeepalive | null;
  /** common_lb_config.close_connections_on_host_set_change. */
  readonly closeConnectionsOnHostSetChange: boolean;
  /** track_timeout_budgets: the router records the upstream_rq_timeout_budget_* histograms. */
  readonly trackTimeoutBudgets: boolean;
  /** metadata.filter_metadata, for filters. */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** health_checks: Envoy runs at most one (validation refuses more). */
  readonly healthChecks: readonly HealthCheck[];
  readonly circuitBreakers: CircuitBreakers;
  /** transport_socket, or the v2 `tls_context` upgraded into a `proxy.transport_sockets.tls` one; null: plaintext. */
  readonly transportSocket: TransportSocketConfig | null;
  readonly transportSocketMatches: readonly TransportSocketMatch[];
  readonly upstreamHttpProtocolOptions: UpstreamHttpProtocolOptions | null;
  readonly commonHttpProtocolOptions: CommonHttpProtocolOptions;
  readonly httpProtocolOptions: Http1ProtocolOptions;
  /** Set (even empty) means the upstream speaks HTTP/2 with prior knowledge. */
  readonly http2ProtocolOptions: Http2ProtocolOptions | null;
  /** Extension name (our spelling) -> its typed options. */
  readonly typedExtensionProtocolOptions: Readonly<Record<string, UnmodelledMessage>>;
  readonly protocolSelection: ClusterProtocolSelection;
  // DNS settings: read by STRICT_DNS and LOGICAL_DNS clusters, ignored by the others.
  readonly dnsRefreshRateMs: number;
  /** null: failures retry at dnsRefreshRateMs. */
  readonly dnsFailureRefreshRate: RefreshRate | null;
  readonly respectDnsTtl: boolean;
  readonly dnsLookupFamily: DnsLookupFamily;
  /** Empty: the system resolver configuration. */
  readonly dnsResolvers: readonly SocketAddress[];
  readonly useTcpForDnsLookups: boolean;
  /** outlier_detection; null: none (no host is ever ejected). */
  readonly outlierDetection: OutlierDetection | null;
  /** ORIGINAL_DST only: how often unused hosts are swept. */
  readonly cleanupIntervalMs: number;
  readonly lbSubsetConfig: LbSubsetConfig | null;
  readonly ringHashLbConfig: RingHashLbConfig;
  readonly maglevLbConfig: MaglevLbConfig;
  readonly originalDstLbConfig: { readonly useHttpHeader: boolean };
  readonly leastRequestLbConfig: LeastRequestLbConfig;
  readonly commonLbConfig: CommonLbConfig;
  /** v2 drain_connections_on_host_removal, v3 ignore_health_on_host_removal. */
  readonly drainConnectionsOnHostRemoval: boolean;
  readonly closeConnectionsOnHostHealthFailure: boolean;
  /** The cluster as v3 JSON, for /config_dump. */
  readonly source: unknown;
}

/** core.HealthCheck, defaults filled in, durations in ms. */
export interface HealthCheck {
  readonly timeoutMs: number;
  readonly intervalMs: number;
  readonly initialJitterMs: number;
  readonly intervalJitterMs: number;
  readonly intervalJitterPercent: number;
  readonly unhealthyThreshold: number;
  readonly healthyThreshold: number;
  /** 60 s unless set: the interval until the cluster has had a connection. */
  readonly noTrafficIntervalMs: number;
  /** Defaults: interval; unhealthy interval; interval. */
  readonly unhealthyIntervalMs: number;
  readonly unhealthyEdgeIntervalMs: number;
  readonly healthyEdgeIntervalMs: number;
  readonly reuseConnection: boolean;
  /** '' when unset: no event log. */
  readonly eventLogPath: string;
  readonly alwaysLogHealthCheckFailures: boolean;
  /**
   * transport_socket_match_criteria: matched against transport_socket_matches as if it were each
   * host's `proxy.transport_socket_match` metadata; null: the host's own metadata decides.
   */
  readonly transportSocketMatchCriteria: Readonly<Record<string, unknown>> | null;
  readonly checker: HealthChecker;
}

/** A health check's kind (its http_health_check, tcp_health_check or grpc_health_check). */
export type HealthChecker = HttpHealthCheck | TcpHealthCheck | GrpcHealthCheck;

export interface HttpHealthCheck {
  readonly kind: 'http';
  /** '' when unset: the cluster name. */
  readonly host: string;
  readonly path: string;
  /** Half-open [start, end) ranges; [200, 201) when none is configured. */
  readonly expectedStatuses: readonly (readonly [number, number])[];
  readonly requestHeadersToAdd: readonly { readonly key: string; readonly value: string; readonly append: boolean }[];
  /** Lower case. */
  readonly requestHeadersToRemove: readonly string[];
  /** service_name_matcher; null: the response's cluster is not checked. */
  readonly serviceNameMatcher: StringMatch | null;
}

export interface TcpHealthCheck {
  readonly kind: 'tcp';
  /** Hex; empty: connect only. (Hex, not Buffer: the model is frozen.) */
  readonly send: string;
  /** Hex; each must be found, in order, in what comes back. */
  readonly receive: readonly string[];
}

export interface GrpcHealthCheck {
  readonly kind: 'grpc';
  readonly serviceName: string;
  /** '' when unset: the cluster name. */
  readonly authority: string;
}

/** Each knob null when unset: the system default stays. */
export interface TcpKeepalive {
  readonly probes: number | null;
  readonly timeS: number | null;
  readonly intervalS: number | null;
}

// ---- stats -------------------------------------------------------------------------------

export interface StatsConfig {
  /** stats_tags in order; tag names in our spelling (`proxy.cluster_name`). */
  readonly statsTags: readonly TagSpecifier[];
  /** use_all_default_tags (default true): every default tag rule runs. */
  readonly useAllDefaultTags: boolean;
  /** histogram_bucket_settings: the first rule matching a histogram's name gives its buckets. */
  readonly histogramBucketSettings: readonly HistogramBucketRule[];
}

export interface TagSpecifier {
  readonly tagName: string;
  /** A label on every stat; null selects the default rules of tagName instead. */
  readonly fixedValue: string | null;
}

/** A StringMatcher of the kinds this build runs. */
export interface StringMatch {
  readonly kind: 'exact' | 'prefix' | 'suffix' | 'contains' | 'safe_regex';
  /** The pattern for safe_regex (RE2 syntax, matched against the whole input; ignoreCase unused). */
  readonly value: string;
  readonly ignoreCase: boolean;
}

export interface HistogramBucketRule {
  /** Matched against the full stat name, before tag extraction. */
  readonly match: StringMatch;
  /** Upper bounds, ascending, each above 0. */
  readonly buckets: readonly number[];
}

/** Bootstrap.overload_manager, which every worker runs for itself (src/overload). */
export interface OverloadManagerConfig {
  /** refresh_interval: how often each monitor is read (Envoy's default 1 s). */
  readonly refreshIntervalMs: number;
  readonly resourceMonitors: readonly ResourceMonitorConfig[];
  readonly actions: readonly OverloadActionConfig[];
}

/** A resource monitor (src/extensions/resource_monitors): what measures one resource's pressure, 1 at its limit. */
export type ResourceMonitorConfig = FixedHeapMonitorConfig | InjectedResourceMonitorConfig;

export interface FixedHeapMonitorConfig {
  readonly kind: 'fixed_heap';
  readonly name: string;
  readonly maxHeapSizeBytes: number;
}

export interface InjectedResourceMonitorConfig {
  readonly kind: 'injected_resource';
  readonly name: string;
  /** The file whose content is the pressure, a number in [0, 1]. */
  readonly filename: string;
}

/** The overload actions this build acts on (`proxy.overload_actions.<kind>`). */
export type OverloadActionKind = 'stop_accepting_requests' | 'disable_http_keepalive' | 'stop_accepting_connections' | 'shrink_heap';

export interface OverloadActionConfig {
  /** As the stats name it: `proxy.overload_actions.<kind>`. */
  readonly name: string;
  readonly kind: OverloadActionKind;
  /** The action is active while any of its triggers has fired. */
  readonly triggers: readonly OverloadTriggerConfig[];
}

/** A threshold trigger: fired while the monitor's pressure is at or above `threshold`. */
export interface OverloadTriggerConfig {
  /** The monitor's index in resourceMonitors. */
  readonly monitor: number;
  readonly threshold: number;
}

/**
 * A stats sink: proxy.stat_sinks.statsd or proxy.stat_sinks.dog_statsd (statsd lines), or
 * proxy.stat_sinks.metrics_service (a gRPC stream). Its descriptor (src/extensions/stat_sinks)
 * builds it.
 */
export type StatsSinkConfig = StatsdSinkConfig | MetricsServiceSinkConfig;

export interface StatsdSinkConfig {
  readonly kind: 'statsd';
  readonly name: string;
  /** UDP datagrams to an address, or a TCP stream through a static cluster (StatsdSink only). */
  readonly target: { readonly kind: 'udp'; readonly address: SocketAddress } | { readonly kind: 'tcp'; readonly clusterName: string };
  /** Before every stat name, with a dot. */
  readonly prefix: string;
  /** DogStatsD: tag-extracted names with their tags (`|#name:value,...`); else full names. */
  readonly tagged: boolean;
  /** The most a datagram of counters and gauges holds, lines joined by newlines; 0: one line each. */
  readonly maxBytesPerDatagram: number;
}

export interface MetricsServiceSinkConfig {
  readonly kind: 'metrics_service';
  readonly name: string;
  readonly target: GrpcTarget;
  /** The MetricsService version (its gRPC method); AUTO is V2 in Envoy 1.16. */
  readonly transportApiVersion: XdsApiVersion;
  /** Counters as their increase since the previous flush, rather than their value. */
  readonly reportCountersAsDeltas: boolean;
}

// ---- runtime -----------------------------------------------------------------------------

export type RuntimeLayerConfig = StaticRuntimeLayer | DiskRuntimeLayer | AdminRuntimeLayer | RtdsRuntimeLayer;

export interface StaticRuntimeLayer {
  readonly kind: 'static';
  readonly name: string;
  /** The Struct flattened: `a.b.c` keys, values as Envoy writes them. */
  readonly values: readonly (readonly [string, string])[];
}

export interface DiskRuntimeLayer {
  readonly kind: 'disk';
  readonly name: string;
  readonly symlinkRoot: string;
  readonly subdirectory: string;
  readonly appendServiceCluster: boolean;
}

export interface AdminRuntimeLayer {
  readonly kind: 'admin';
  readonly name: string;
}

/** An rtds_layer: its values are the Runtime resource `resourceName` from `source` (empty until the first update). */
export interface RtdsRuntimeLayer {
  readonly kind: 'rtds';
  /** The layer's name, as /runtime shows it. */
  readonly name: string;
  /** rtds_layer.name: the resource subscribed to. */
  readonly resourceName: string;
  /** rtds_layer.rtds_config. */
  readonly source: ConfigSourceConfig;
}

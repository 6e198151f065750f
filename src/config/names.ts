// Extension and type names. Operators' files use Envoy's spellings (`envoy.tcp_proxy`,
// `envoy.filters.network.tcp_proxy`, type URLs in the `envoy.` package); the model uses ours
// (`proxy.filters.network.tcp_proxy`). Type URLs keep Envoy's package, because that is where
// the messages really live, but may be written with `proxy.` as well. An extension's legacy
// names are its descriptor's (extension.ts); the registry resolves them.

export const TCP_PROXY = 'proxy.filters.network.tcp_proxy';
export const HTTP_CONNECTION_MANAGER = 'proxy.filters.network.http_connection_manager';
export const ROUTER = 'proxy.filters.http.router';
export const HEALTH_CHECK = 'proxy.filters.http.health_check';
export const CORS = 'proxy.filters.http.cors';
export const FAULT = 'proxy.filters.http.fault';
export const CSRF = 'proxy.filters.http.csrf';
export const LOCAL_RATELIMIT = 'proxy.filters.http.local_ratelimit';
export const COMPRESSOR = 'proxy.filters.http.compressor';
export const GZIP = 'proxy.filters.http.gzip';
export const BUFFER = 'proxy.filters.http.buffer';
export const GRPC_WEB = 'proxy.filters.http.grpc_web';
export const GRPC_HTTP1_BRIDGE = 'proxy.filters.http.grpc_http1_bridge';
export const RATELIMIT = 'proxy.filters.http.ratelimit';
export const EXT_AUTHZ = 'proxy.filters.http.ext_authz';
export const TLS_TRANSPORT_SOCKET = 'proxy.transport_sockets.tls';
export const RAW_BUFFER_TRANSPORT_SOCKET = 'proxy.transport_sockets.raw_buffer';
export const UPSTREAM_PROXY_PROTOCOL_TRANSPORT_SOCKET = 'proxy.transport_sockets.upstream_proxy_protocol';
export const PREVIOUS_HOSTS = 'proxy.retry_host_predicates.previous_hosts';
export const ALLOW_LISTED_ROUTES = 'proxy.internal_redirect_predicates.allow_listed_routes';
export const PREVIOUS_ROUTES = 'proxy.internal_redirect_predicates.previous_routes';
export const SAFE_CROSS_SCHEME = 'proxy.internal_redirect_predicates.safe_cross_scheme';
export const TLS_INSPECTOR = 'proxy.filters.listener.tls_inspector';
export const ORIGINAL_DST_LISTENER_FILTER = 'proxy.filters.listener.original_dst';
export const STATSD_SINK = 'proxy.stat_sinks.statsd';
export const DOG_STATSD_SINK = 'proxy.stat_sinks.dog_statsd';
export const METRICS_SERVICE_SINK = 'proxy.stat_sinks.metrics_service';
export const ZIPKIN_TRACER = 'proxy.tracers.zipkin';
export const FIXED_HEAP_MONITOR = 'proxy.resource_monitors.fixed_heap';
export const INJECTED_RESOURCE_MONITOR = 'proxy.resource_monitors.injected_resource';

const ENVOY_PREFIX = 'envoy.';
const PROXY_PREFIX = 'proxy.';

/** `envoy.cluster_name` -> `proxy.cluster_name`; other names unchanged. */
export function proxySpelling(name: string): string {
  return name.startsWith(ENVOY_PREFIX) ? PROXY_PREFIX + name.slice(ENVOY_PREFIX.length) : name;
}

/** `proxy.config.cluster.v3.Cluster` -> `envoy.config.cluster.v3.Cluster`; other names unchanged. */
export function envoyTypeName(typeName: string): string {
  return typeName.startsWith(PROXY_PREFIX) ? ENVOY_PREFIX + typeName.slice(PROXY_PREFIX.length) : typeName;
}

const TYPE_URL_PREFIX = 'type.googleapis.com/';

export function typeUrl(typeName: string): string {
  return TYPE_URL_PREFIX + typeName;
}

/** The message name of a type URL: everything after the last `/`. */
export function typeNameOfUrl(url: string): string {
  return url.slice(url.lastIndexOf('/') + 1);
}

/** The v3 message types of the typed_config of the extensions we implement. */
export const CONFIG_TYPES = {
  tcpProxy: 'envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy',
  httpConnectionManager: 'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
  router: 'envoy.extensions.filters.http.router.v3.Router',
  healthCheck: 'envoy.extensions.filters.http.health_check.v3.HealthCheck',
  cors: 'envoy.extensions.filters.http.cors.v3.Cors',
  fault: 'envoy.extensions.filters.http.fault.v3.HTTPFault',
  csrf: 'envoy.extensions.filters.http.csrf.v3.CsrfPolicy',
  localRateLimit: 'envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit',
  compressor: 'envoy.extensions.filters.http.compressor.v3.Compressor',
  gzipCompressorLibrary: 'envoy.extensions.compression.gzip.compressor.v3.Gzip',
  gzip: 'envoy.extensions.filters.http.gzip.v3.Gzip',
  buffer: 'envoy.extensions.filters.http.buffer.v3.Buffer',
  bufferPerRoute: 'envoy.extensions.filters.http.buffer.v3.BufferPerRoute',
  grpcWeb: 'envoy.extensions.filters.http.grpc_web.v3.GrpcWeb',
  grpcHttp1Bridge: 'envoy.extensions.filters.http.grpc_http1_bridge.v3.Config',
  rateLimit: 'envoy.extensions.filters.http.ratelimit.v3.RateLimit',
  rateLimitPerRoute: 'envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute',
  extAuthz: 'envoy.extensions.filters.http.ext_authz.v3.ExtAuthz',
  extAuthzPerRoute: 'envoy.extensions.filters.http.ext_authz.v3.ExtAuthzPerRoute',
  previousHosts: 'envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate',
  allowListedRoutes: 'envoy.extensions.internal_redirect.allow_listed_routes.v3.AllowListedRoutesConfig',
  previousRoutes: 'envoy.extensions.internal_redirect.previous_routes.v3.PreviousRoutesConfig',
  safeCrossScheme: 'envoy.extensions.internal_redirect.safe_cross_scheme.v3.SafeCrossSchemeConfig',
  upstreamTlsContext: 'envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
  downstreamTlsContext: 'envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
  rawBuffer: 'envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer',
  upstreamProxyProtocol: 'envoy.extensions.transport_sockets.proxy_protocol.v3.ProxyProtocolUpstreamTransport',
  tlsInspector: 'envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector',
  aggregateCluster: 'envoy.extensions.clusters.aggregate.v3.ClusterConfig',
  originalDst: 'envoy.extensions.filters.listener.original_dst.v3.OriginalDst',
  statsdSink: 'envoy.config.metrics.v3.StatsdSink',
  fixedHeap: 'envoy.extensions.resource_monitors.fixed_heap.v3.FixedHeapConfig',
  injectedResource: 'envoy.extensions.resource_monitors.injected_resource.v3.InjectedResourceConfig',
  dogStatsdSink: 'envoy.config.metrics.v3.DogStatsdSink',
  metricsService: 'envoy.config.metrics.v3.MetricsServiceConfig',
  zipkin: 'envoy.config.trace.v3.ZipkinConfig',
} as const;

/**
 * The protocol options type of each extension of Envoy 1.16 that takes protocol options (its
 * ProtocolOptionsFactory): what a v2 extension_protocol_options Struct is read as.
 */
export const PROTOCOL_OPTIONS_TYPES: ReadonlyMap<string, string> = new Map([
  ['proxy.filters.network.thrift_proxy', 'envoy.extensions.filters.network.thrift_proxy.v3.ThriftProtocolOptions'],
  ['proxy.filters.network.redis_proxy', 'envoy.extensions.filters.network.redis_proxy.v3.RedisProtocolOptions'],
]);

// What the connection pools and filters need to know about a cluster, beyond its hosts.

import * as net from 'node:net';
import type {
  CircuitBreakers,
  ClusterConfig,
  Http2ProtocolOptions,
  RoutingPriority,
  LeastRequestLbConfig,
  MaglevLbConfig,
  RingHashLbConfig,
  TcpKeepalive,
  UpstreamHttpProtocolOptions,
} from '../../config/model';
import type { HttpProtocol } from '../../http/codec';
import type { Logger } from '../../log/logger_api';
import { Http2CodecStats } from '../../http/http2/codec_stats';
import type { Scope, StatsStore } from '../../stats/stats';
import type { RuntimeSource } from '../../runtime/live_runtime';
import { ClusterStats } from './cluster_stats';
import { circuitBreakersName } from '../shared/circuit_breaker_names';
import { RESOURCE_COUNT, ResourceManager } from '../shared/resource_manager';
import { TimeoutBudgetStats } from './timeout_budget_stats';
import type { Connector, TransportSocketOptions } from '../../network/connector';
import { ClusterTransportSockets, hasDownstreamSpecificConnections } from '../shared/cluster_transport_sockets';
import type { SecretSource } from '../../tls/secret_store';
import type { Host } from './host';

export class ClusterInfo {
  readonly name: string;
  readonly statName: string;
  readonly connectTimeoutMs: number;
  /** 0: no limit. */
  readonly maxRequestsPerConnection: number;
  /** Set: the hosts speak HTTP/2 (with prior knowledge, or ALPN h2 over TLS). */
  readonly http2ProtocolOptions: Http2ProtocolOptions | null;
  /** protocol_selection USE_DOWNSTREAM_PROTOCOL: HTTP/2 only for HTTP/2 downstream requests. */
  readonly useDownstreamProtocol: boolean;
  readonly perConnectionBufferLimitBytes: number;
  /** common_http_protocol_options.idle_timeout: a connection without a stream this long closes; 0: never. */
  readonly idleTimeoutMs: number;
  /** common_http_protocol_options.max_connection_duration: a connection this old drains; 0: no limit. */
  readonly maxConnectionDurationMs: number;
  /** common_http_protocol_options.max_headers_count, for responses. */
  readonly maxResponseHeadersCount: number;
  /** common_http_protocol_options.max_stream_duration: the router ends a try this old; 0: no limit. */
  readonly maxStreamDurationMs: number;
  /** http_protocol_options.header_key_format proper_case_words: HTTP/1 request header names go Proper-Cased. */
  readonly properCaseHeaderKeys: boolean;
  /** http_protocol_options.enable_trailers: chunked HTTP/1 requests and responses carry trailers. */
  readonly http1Trailers: boolean;
  /** upstream_bind_config's source address; undefined lets the kernel choose. */
  readonly sourceAddress: string | undefined;
  readonly sourcePort: number | undefined;
  readonly tcpKeepalive: TcpKeepalive | null;
  readonly closeConnectionsOnHostSetChange: boolean;
  /** Close tcp_proxy's connections to a host that fails a health check or is ejected. */
  readonly closeConnectionsOnHostHealthFailure: boolean;
  /** Some transport socket (an upstream PROXY protocol one) makes each connection belong to one downstream connection. */
  readonly downstreamSpecificConnections: boolean;
  /** filter_metadata by filter name, for filters. */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** track_timeout_budgets: the budget histograms, else null (and no work per request). */
  readonly timeoutBudgetStats: TimeoutBudgetStats | null;
  readonly ringHashLbConfig: RingHashLbConfig;
  readonly maglevLbConfig: MaglevLbConfig;
  /** least_request_lb_config, for the LEAST_REQUEST balancer. */
  readonly leastRequestLbConfig: LeastRequestLbConfig;
  /** The cluster's transport sockets: transport_socket_matches, then transport_socket (or plaintext). */
  readonly transportSockets: ClusterTransportSockets;
  private readonly upstreamHttpProtocolOptions: UpstreamHttpProtocolOptions | null;
  /**
   * Stat handles made on first use: a worker of a proxy with thousands of clusters pays only for
   * those its traffic touches (the supervisor has already interned every name, declareClusterStatNames).
   */
  private statsHandles: ClusterStats | null = null;
  private http2StatsHandles: Http2CodecStats | null = null;
  private readonly resourceManagers: { DEFAULT: ResourceManager | null; HIGH: ResourceManager | null } = { DEFAULT: null, HIGH: null };
  private readonly circuitBreakers: CircuitBreakers;

  /**
   * `reportsTables`: this process sets the gauges of the hashing balancers' tables. Every
   * worker builds the same table and gauges add up over workers, so only one reports (Envoy
   * builds the table once and shares it). `log`: the `upstream` logger (TLS handshake failures).
   * `secrets`: where the secrets its TLS contexts name are found.
   * @throws FieldError, relative to the cluster, at a transport socket that cannot be built
   */
  constructor(
    config: ClusterConfig,
    private readonly store: StatsStore,
    private readonly runtime: RuntimeSource,
    log: Logger,
    secrets: SecretSource,
    private readonly reportsTables = true,
  ) {
    this.circuitBreakers = config.circuitBreakers;
    this.name = config.name;
    this.statName = config.statName;
    this.connectTimeoutMs = config.connectTimeoutMs;
    this.maxRequestsPerConnection = config.maxRequestsPerConnection;
    this.http2ProtocolOptions = config.http2ProtocolOptions;
    this.useDownstreamProtocol = config.protocolSelection === 'USE_DOWNSTREAM_PROTOCOL';
    this.perConnectionBufferLimitBytes = config.perConnectionBufferLimitBytes;
    const common = config.commonHttpProtocolOptions;
    this.idleTimeoutMs = common.idleTimeoutMs;
    this.maxConnectionDurationMs = common.maxConnectionDurationMs;
    this.maxResponseHeadersCount = common.maxHeadersCount;
    this.maxStreamDurationMs = common.maxStreamDurationMs;
    this.properCaseHeaderKeys = config.httpProtocolOptions.headerKeyFormat === 'proper_case_words';
    this.http1Trailers = config.httpProtocolOptions.enableTrailers;
    this.sourceAddress = config.upstreamBindConfig?.address;
    this.sourcePort = config.upstreamBindConfig?.port;
    this.tcpKeepalive = config.tcpKeepalive;
    this.closeConnectionsOnHostSetChange = config.closeConnectionsOnHostSetChange;
    this.closeConnectionsOnHostHealthFailure = config.closeConnectionsOnHostHealthFailure;
    this.downstreamSpecificConnections = hasDownstreamSpecificConnections(config);
    this.metadata = config.metadata;
    this.ringHashLbConfig = config.ringHashLbConfig;
    this.maglevLbConfig = config.maglevLbConfig;
    this.leastRequestLbConfig = config.leastRequestLbConfig;
    this.transportSockets = new ClusterTransportSockets(config, store.scope(`cluster.${config.statName}`), log, secrets);
    this.upstreamHttpProtocolOptions = config.upstreamHttpProtocolOptions;
    this.timeoutBudgetStats = config.trackTimeoutBudgets ? new TimeoutBudgetStats(store.scope(`cluster.${config.statName}`)) : null;
  }

  /** The protocol of a request upstream, for a downstream request of `downstream` (protocol_selection). */
  upstreamProtocol(downstream: HttpProtocol): HttpProtocol {
    if (this.http2ProtocolOptions === null) return 'http1';
    return this.useDownstreamProtocol ? downstream : 'http2';
  }

  /** `cluster.<name>.http2.*`, for clusters whose pools speak HTTP/2; made on first use. */
  get http2Stats(): Http2CodecStats {
    return (this.http2StatsHandles ??= new Http2CodecStats(this.store.scope(`cluster.${this.statName}.http2`)));
  }

  get stats(): ClusterStats {
    return (this.statsHandles ??= new ClusterStats(this.store.scope(`cluster.${this.statName}`)));
  }

  /** `cluster.<name>`, for statistics made as they are met (Envoy's statsScope: gRPC calls by service and method, the rate limit filter's calls). */
  statsScope(): Scope {
    return this.store.scope(`cluster.${this.statName}`);
  }

  /** How connections to `host` are opened: its transport_socket_matches entry, else the cluster's transport socket. */
  connectorFor(host: Host): Connector {
    return this.transportSockets.connectorFor(host);
  }

  /**
   * What a request whose upstream host header is `authority` asks of the transport socket
   * (upstream_http_protocol_options' auto_sni and auto_san_validation, as Envoy's router sets
   * them); null, the common case, when it asks nothing.
   */
  transportSocketOptions(authority: string): TransportSocketOptions | null {
    const protocol = this.upstreamHttpProtocolOptions;
    if (protocol === null || (!protocol.autoSni && !protocol.autoSanValidation)) return null;
    const host = authorityHost(authority);
    // Envoy never sends an IP address as SNI; the SAN check takes the host as it is.
    const serverName = protocol.autoSni && host !== '' && net.isIP(host) === 0 ? host : null;
    const subjectAltNames = protocol.autoSanValidation && host !== '' ? [host] : [];
    if (serverName === null && subjectAltNames.length === 0) return null;
    return { serverName, subjectAltNames, key: `${serverName ?? ''}/${subjectAltNames.join(',')}` };
  }

  /**
   * The circuit breakers of a routing priority, shared by every worker. Made on first use, as
   * the statistics are.
   */
  resourceManager(priority: RoutingPriority): ResourceManager {
    return (this.resourceManagers[priority] ??= new ResourceManager(
      this.store.cells(circuitBreakersName(this.statName, priority), RESOURCE_COUNT),
      this.circuitBreakers[priority],
      this.runtime,
      this.name,
      priority,
    ));
  }

  /**
   * `cluster.<stat_name>.<name>`, for a hashing policy's table gauges (ring_hash_lb, maglev_lb),
   * made by the balancer that uses it; null in the workers that do not report them.
   */
  tableScope(name: string): Scope | null {
    return this.reportsTables ? this.store.scope(`cluster.${this.statName}.${name}`) : null;
  }
}

/** Envoy's parseAuthority: the host of `host[:port]` or `[v6]:port`, without brackets. */
function authorityHost(authority: string): string {
  if (authority.startsWith('[')) {
    const end = authority.indexOf(']');
    return end === -1 ? authority : authority.slice(1, end);
  }
  const colon = authority.lastIndexOf(':');
  // More than one colon: an IPv6 address without brackets, which has no port.
  return colon === -1 || authority.indexOf(':') !== colon ? authority : authority.slice(0, colon);
}

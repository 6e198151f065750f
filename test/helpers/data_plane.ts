// Builders for the configuration model and an in-process data plane (listeners, filters,
// clusters) over a heap stats store, for tests that drive real sockets on 127.0.0.1.

import type { AccessLogsContext } from '../../src/access_log/access_log_factory';
import type {
  Bootstrap,
  ClusterConfig,
  EndpointHealthStatus,
  HttpConnectionManagerConfig,
  FilterChainMatch,
  ListenerConfig,
  Route,
  RouteAction,
  TcpProxyConfig,
  VirtualHost,
  LocalityLbEndpoints,
} from '../../src/config/model';
import { type Clock, SystemClock } from '../../src/common/clock';
import { circuitBreakersConfig, commonHttpProtocolOptionsOf, http1ProtocolOptionsOf } from '../../src/config/model_builder';
import { ListenerManager } from '../../src/listener/listener_manager';
import { ListenSocket } from '../../src/listener/listen_socket';
import * as addon from '../../src/native/addon';
import { NetworkFilterBuilder } from '../../src/listener/network_filter_builder';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import type { Logger } from '../../src/log/logger_api';
import type { DrainDecider } from '../../src/server/drain_decider';
import { neverDrain } from '../../src/server/drain_decider';
import { OverloadState } from '../../src/overload/overload_state';
import { createHeapStatsStore } from '../../src/stats/store';
import { MembershipDriver } from './membership';
import type { HostStatName } from '../../src/shared_memory/region_layout';
import { ConnectionIds, type UpstreamConnectionLogs } from '../../src/log/connection_log';
import { upstreamConnectionLogs } from '../../src/pool/upstream_connection_logs';
import { ClusterManager } from '../../src/upstream/worker/cluster_manager';
import type { RandomSource } from '../../src/common/random';
import { dataPlaneFactories } from '../../src/extensions/data_plane_extensions';
import { downstreamHttp2ProtocolOptions } from '../../src/extensions/network/http_connection_manager/model';
import { RouteConfigUpdates } from '../../src/filters/network/http_connection_manager/route_config_updates';
import { SecretStore } from '../../src/tls/secret_store';

const LISTEN_BACKLOG = 128;
/** As a worker waits after a failed accept(). */
const ACCEPT_RETRY_MS = 100;

const NO_LOCALITY = { region: '', zone: '', subZone: '' };

export interface EndpointSpec {
  readonly port: number;
  readonly address?: string;
  readonly weight?: number;
  readonly health?: EndpointHealthStatus;
  readonly priority?: number;
  /** The endpoint's metadata by filter namespace, e.g. `{ 'proxy.lb': { canary: true } }`. */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

export function staticCluster(name: string, endpoints: readonly EndpointSpec[], overrides: Partial<ClusterConfig> = {}): ClusterConfig {
  return {
    name,
    statName: name.replace(/:/g, '_'),
    type: 'STATIC',
    connectTimeoutMs: 5000,
    lbPolicy: 'ROUND_ROBIN',
    perConnectionBufferLimitBytes: 1024 * 1024,
    maxRequestsPerConnection: 0,
    loadAssignment: {
      clusterName: name,
      policy: { overprovisioningFactor: 140, dropOverload: null, endpointStaleAfterMs: null },
      endpoints: [...new Set(endpoints.map((e) => e.priority ?? 0))].map((priority) => ({
        locality: NO_LOCALITY,
        priority,
        loadBalancingWeight: 0,
        lbEndpoints: endpoints
          .filter((e) => (e.priority ?? 0) === priority)
          .map((e) => ({
            address: { address: e.address ?? '127.0.0.1', port: e.port },
            hostname: '',
            healthStatus: e.health ?? 'UNKNOWN',
            loadBalancingWeight: e.weight ?? 1,
            metadata: e.metadata ?? {},
          })),
      })),
    },
    // The model's defaults for the fields a static cluster leaves unset.
    clusterType: null,
    edsClusterConfig: null,
    healthChecks: [],
    circuitBreakers: circuitBreakersConfig({}),
    transportSocket: null,
    transportSocketMatches: [],
    upstreamHttpProtocolOptions: null,
    commonHttpProtocolOptions: commonHttpProtocolOptionsOf({}),
    httpProtocolOptions: http1ProtocolOptionsOf({}),
    http2ProtocolOptions: null,
    typedExtensionProtocolOptions: {},
    protocolSelection: 'USE_CONFIGURED_PROTOCOL',
    dnsRefreshRateMs: 5000,
    dnsFailureRefreshRate: null,
    respectDnsTtl: false,
    dnsLookupFamily: 'AUTO',
    dnsResolvers: [],
    useTcpForDnsLookups: false,
    outlierDetection: null,
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
    closeConnectionsOnHostHealthFailure: false,
    upstreamBindConfig: null,
    tcpKeepalive: null,
    closeConnectionsOnHostSetChange: false,
    trackTimeoutBudgets: false,
    metadata: {},
    source: {},
    ...overrides,
  };
}

export function clusterRoute(match: { prefix?: string; path?: string; caseSensitive?: boolean }, cluster: string, extra: Partial<Extract<RouteAction, { kind: 'route' }>> = {}): Route {
  return {
    name: '',
    match: { caseSensitive: true, headers: [], queryParameters: [], grpc: false, ...match },
    action: { kind: 'route', cluster, timeoutMs: 15000, priority: 'DEFAULT', ...extra },
  };
}

export function directRoute(match: { prefix?: string; path?: string }, status: number, body: string): Route {
  return { name: '', match: { caseSensitive: true, headers: [], queryParameters: [], grpc: false, ...match }, action: { kind: 'direct_response', status, body, bodyFile: null } };
}

export function virtualHost(name: string, domains: string[], routes: Route[]): VirtualHost {
  return { name, domains, routes, requireTls: 'NONE' };
}

export function httpConnectionManager(virtualHosts: VirtualHost[], overrides: Partial<HttpConnectionManagerConfig> = {}): HttpConnectionManagerConfig {
  return {
    kind: 'http_connection_manager',
    name: 'proxy.filters.network.http_connection_manager',
    statPrefix: 'ingress_http',
    routeConfig: { name: 'local_route', virtualHosts },
    rds: null,
    httpFilters: [{ name: 'proxy.filters.http.router' }],
    useRemoteAddress: false,
    xffNumTrustedHops: 0,
    serverName: 'proxy',
    codecType: 'AUTO',
    http2ProtocolOptions: downstreamHttp2ProtocolOptions({}),
    streamIdleTimeoutMs: 300000,
    requestTimeoutMs: 0,
    requestHeadersTimeoutMs: 0,
    commonHttpProtocolOptions: commonHttpProtocolOptionsOf({}),
    httpProtocolOptions: http1ProtocolOptionsOf({}),
    accessLogs: [],
    upgrades: {},
    generateRequestId: true,
    preserveExternalRequestId: false,
    skipXffAppend: false,
    via: '',
    serverHeaderTransformation: 'OVERWRITE',
    normalizePath: false,
    mergeSlashes: false,
    addUserAgent: false,
    tracing: null,
    ...overrides,
  };
}

export function tcpProxy(cluster: string, overrides: Partial<TcpProxyConfig> = {}): TcpProxyConfig {
  return {
    kind: 'tcp_proxy',
    name: 'proxy.filters.network.tcp_proxy',
    statPrefix: 'tcp_stats',
    cluster,
    idleTimeoutMs: 3600000,
    accessLogs: [],
    ...overrides,
  };
}

/** A filter_chain_match that matches every connection. */
export const anyMatch: FilterChainMatch = { destinationPort: null, serverNames: [], transportProtocol: '', applicationProtocols: [] };

export function listener(name: string, filter: HttpConnectionManagerConfig | TcpProxyConfig, overrides: Partial<ListenerConfig> = {}): ListenerConfig {
  return {
    name,
    address: { address: '127.0.0.1', port: 0 },
    perConnectionBufferLimitBytes: 1024 * 1024,
    reusePort: false,
    exactBalance: false,
    trafficDirection: 'UNSPECIFIED',
    listenerFilters: [],
    listenerFiltersTimeoutMs: 15_000,
    continueOnListenerFiltersTimeout: false,
    filterChains: [{ match: anyMatch, filters: [filter], transportSocket: null }],
    ...overrides,
  };
}

export const silentLogger: Logger = {
  enabled: () => false,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  critical: () => undefined,
  // A copy with a method replaced (`{ ...silentLogger, warn }`) keeps logging through itself.
  forFile() {
    return this;
  },
};

/** Upstream connection logs that log nothing. */
export const silentConnectionLogs: UpstreamConnectionLogs = upstreamConnectionLogs(ConnectionIds.forOneProcess(), () => silentLogger);

export interface DataPlane {
  readonly stats: ReturnType<typeof createHeapStatsStore>;
  readonly clusters: ClusterManager;
  readonly listeners: ListenerManager;
  /** The port a listener of the bootstrap was bound to. */
  port(listenerName: string): number;
  /** The value of a stat, 0 when it was never created. */
  stat(name: string): number;
  /** A per-host statistic of GET /clusters (`rq_total`, `cx_connect_fail`, ...). */
  hostStat(cluster: string, address: string, stat: HostStatName): number;
  /** What the supervisor does when a cluster's discovery finds `endpoints`: an update, if anything changed. */
  setMembership(cluster: string, endpoints: readonly LocalityLbEndpoints[]): void;
  /** What the supervisor sends when a health source sets (or clears) `bits` on a host (`ip:port`). */
  setHealthFlags(cluster: string, address: string, bits: number, set: boolean): void;
  close(): Promise<void>;
}

/** Binds every listener on its address (port 0 in tests) and serves them in-process. */
export async function startDataPlane(
  listeners: ListenerConfig[],
  clusters: ClusterConfig[],
  options: {
    drain?: DrainDecider;
    random?: RandomSource;
    localAddress?: string;
    healthCheckFailed?: () => boolean;
    clock?: Clock;
    serviceCluster?: string;
    accessLogs?: AccessLogsContext;
  } = {},
): Promise<DataPlane> {
  const clock = options.clock ?? new SystemClock();
  const bootstrap: Bootstrap = {
    node: { id: 'test', cluster: options.serviceCluster ?? 'test', locality: NO_LOCALITY },
    admin: null,
    listeners,
    clusters,
    localClusterName: null,
    dynamicResources: { adsConfig: null, cdsConfig: null, ldsConfig: null },
    statsFlushIntervalMs: 5000,
    localAddress: options.localAddress,
    statsConfig: { statsTags: [], useAllDefaultTags: true, histogramBucketSettings: [] },
    statsSinks: [],
    runtimeLayers: [],
    tracing: null,
    secrets: [],
    overloadManager: null,
    source: {},
  };
  const stats = createHeapStatsStore();
  const membership = new Map(clusters.map((c) => [c.name, new MembershipDriver(c.name, stats.hosts)]));
  for (const c of clusters) membership.get(c.name)!.next(c.loadAssignment.endpoints);
  const clusterManager = new ClusterManager({ configs: clusters, snapshots: [...membership.values()].map((m) => m.snapshot), store: stats, runtime: new LiveRuntime([]), random: options.random, log: () => silentLogger });
  const filters = new NetworkFilterBuilder({
    bootstrap,
    stats,
    clusters: clusterManager,
    log: () => silentLogger,
    ids: ConnectionIds.forOneProcess(),
    drain: options.drain ?? neverDrain,
    overload: new OverloadState(),
    runtime: new LiveRuntime([]),
    healthCheckFailed: options.healthCheckFailed ?? (() => false),
    clock,
    accessLogs: options.accessLogs ?? null,
    routeConfigs: new RouteConfigUpdates([]),
    secrets: new SecretStore([]),
    ...dataPlaneFactories(),
  });
  const manager = new ListenerManager({
    stats,
    handler: 'worker_0',
    log: () => silentLogger,
    ids: ConnectionIds.forOneProcess(),
    clock,
    runtime: new LiveRuntime([]),
    balanceGroup: { id: String(process.pid), worker: 0, workers: 1 },
  });
  const ports = new Map<string, number>();
  for (const [i, config] of listeners.entries()) {
    const filter = filters.listenerFilter(i);
    const { fd, port } = addon.listenTcp(config.address.address, config.address.port, LISTEN_BACKLOG);
    ports.set(config.name, port);
    manager.addListener(config, new ListenSocket(fd, ACCEPT_RETRY_MS), filter);
  }
  return {
    stats,
    clusters: clusterManager,
    listeners: manager,
    port: (name) => ports.get(name)!,
    stat: (name) => stats.snapshot().get(name) ?? 0,
    hostStat: (cluster, address, stat) => {
      const hosts = clusterManager.get(cluster)!.prioritySet.hostSetsPerPriority.flatMap((set) => set.hosts);
      return stats.hosts.read(hosts.find((h) => h.addressString === address)!.slot!)![stat];
    },
    setMembership: (cluster, endpoints) => {
      const update = membership.get(cluster)!.next(endpoints);
      if (update !== null) clusterManager.update(update);
    },
    setHealthFlags: (cluster, address, bits, set) => clusterManager.update(membership.get(cluster)!.setHealthFlags(address, bits, set)),
    close: async () => {
      await manager.close();
      filters.close();
      clusterManager.close();
    },
  };
}

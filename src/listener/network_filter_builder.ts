// Builds a listener's filter chain from the model (Envoy's listener factory): its terminal
// network filter, with the HTTP filter chain and route table of a connection manager, and the
// tracers its connection managers report to (whose flush timers run until close()). It binds
// and opens no socket; it reads each chain's TLS certificate and key files and names stats in the
// store it is given. So `--mode validate` and the supervisor build what a worker builds, by this
// same code, and refuse a configuration a worker could not run before any worker starts.

import type { AccessLog } from '../access_log/access_log';
import type { AccessLogEntryConfig } from '../access_log/access_log_config';
import { createAccessLogs, type AccessLogsContext } from '../access_log/access_log_factory';
import { atField, FieldError } from '../config/errors';
import type { Bootstrap, ListenerConfig, NetworkFilterConfig, NodeInfo, SocketAddress, TracerConfig } from '../config/model';
import type { Clock } from '../common/clock';
import type { WriteBatch } from '../network/write_batch';
import type { HttpFilterContext, HttpFilterFactoryCreator } from '../filters/http/http_filter_registry';
import type { ConnectionIds } from '../log/connection_log';
import type { LoggerFactory } from '../log/logger_api';
import type { RuntimeSource } from '../runtime/live_runtime';
import type { RouteConfigUpdates } from '../filters/network/http_connection_manager/route_config_updates';
import type { DrainDecider } from '../server/drain_decider';
import type { OverloadState } from '../overload/overload_state';
import type { StatsStore } from '../stats/stats';
import { addressString } from '../network/socket_address';
import { mathRandom } from '../common/random';
import type { Tracer, TracerFactory } from '../tracing/tracer';
import { TracerManager } from '../tracing/tracer_manager';
import { AsyncClient } from '../upstream/worker/async_client';
import type { ClusterManager } from '../upstream/worker/cluster_manager';
import { DownstreamSslStats, DownstreamTlsSocketFactory } from '../tls/downstream_tls_socket';
import type { SecretSource } from '../tls/secret_store';
import { SslSocketFactoryStats } from '../tls/ssl_socket_factory_stats';
import { sanitizeStatName } from '../stats/stats';
import { FilterChainManager, type FilterChain } from './filter_chain_manager';
import { FilterChainSelector } from './filter_chain_selector';
import type { NetworkFilterFactory } from './network_filter';
import { TlsInspector, TlsInspectorStats } from './tls_inspector';

/** What a network filter's factory may use of the worker and of the listener it runs on. */
export interface NetworkFilterContext {
  readonly stats: StatsStore;
  readonly clusters: ClusterManager;
  readonly drain: DrainDecider;
  /** What the worker's overload manager has turned on. */
  readonly overload: OverloadState;
  readonly log: LoggerFactory;
  readonly ids: ConnectionIds;
  readonly runtime: RuntimeSource;
  /** Bootstrap.localAddress. */
  readonly localAddress: string | undefined;
  /** Bootstrap.node: the service cluster and node a request passed through (add_user_agent). */
  readonly node: NodeInfo;
  /** The listener's per_connection_buffer_limit_bytes. */
  readonly bufferLimitBytes: number;
  /** Where the connections' small writes wait for the end of the event loop's turn; null: they go at once. */
  readonly writeBatch: WriteBatch | null;
  /** What the HTTP filters before the router read from the worker. */
  readonly filterContext: HttpFilterContext;
  /** The filter's access_log list, built: its files opened in a process that serves; none in a data plane built to check. */
  accessLogs(entries: readonly AccessLogEntryConfig[]): readonly AccessLog[];
  /** The worker's requests of its own (mirrors). */
  readonly asyncClient: AsyncClient;
  /** The listener's traffic_direction: OUTBOUND makes a connection manager's spans egress spans. */
  readonly trafficDirection: ListenerConfig['trafficDirection'];
  /** The tracer of a connection manager: its own provider, else the bootstrap's tracing.http; null when neither names one. */
  tracerFor(provider: TracerConfig | null): Tracer | null;
  /** The route configurations RDS brought to this process (none where nothing is served). */
  readonly routeConfigs: RouteConfigUpdates;
}

/**
 * A network filter's factory (its descriptor's, src/extensions/network). A method, so that each
 * filter's takes the model its own descriptor built (the registry finds it by that model's name).
 */
export interface NetworkFilterFactoryCreator {
  create(config: NetworkFilterConfig, context: NetworkFilterContext): NetworkFilterFactory;
}

export interface NetworkFilterDeps {
  /** The configuration the listeners come from; its localAddress feeds x-forwarded-for. */
  readonly bootstrap: Bootstrap;
  readonly stats: StatsStore;
  readonly clusters: ClusterManager;
  readonly log: LoggerFactory;
  /** Numbers the streams of this process for their log lines. */
  readonly ids: ConnectionIds;
  readonly drain: DrainDecider;
  /** What the process's overload manager has turned on (never anything, in a process without one). */
  readonly overload: OverloadState;
  readonly runtime: RuntimeSource;
  /** The admin /healthcheck/fail state as this process knows it (the health check filter's input). */
  readonly healthCheckFailed: () => boolean;
  /** Times what HTTP filters cache (the health check filter's cache_time). */
  readonly clock: Clock;
  /** The worker's (see NetworkFilterContext.writeBatch); none where nothing is served. */
  readonly writeBatch?: WriteBatch;
  /** The HTTP filters' factories by name (the registry's, src/extensions). */
  readonly httpFilters: ReadonlyMap<string, HttpFilterFactoryCreator>;
  /** The network filters' factories by name (the registry's, src/extensions). */
  readonly networkFilters: ReadonlyMap<string, NetworkFilterFactoryCreator>;
  /** Where access logs write, in a process that serves; null builds none (nothing is opened). */
  readonly accessLogs: AccessLogsContext | null;
  /** The tracers' factories by name (the registry's, src/extensions). */
  readonly tracers: ReadonlyMap<string, TracerFactory>;
  /** The route configurations RDS brought to this process, and their later updates. */
  readonly routeConfigs: RouteConfigUpdates;
  /** The secrets filter chains' TLS contexts name (static_resources.secrets, SDS). */
  readonly secrets: SecretSource;
}

export class NetworkFilterBuilder {
  private readonly filterContext: HttpFilterContext;
  private readonly asyncClient: AsyncClient;
  /** The tracers of the connection managers built, one per configuration. */
  private readonly tracers: TracerManager;

  constructor(private readonly deps: NetworkFilterDeps) {
    const { bootstrap, clock } = deps;
    this.asyncClient = new AsyncClient({ clock, localAddress: bootstrap.localAddress });
    this.tracers = new TracerManager(deps.tracers, {
      clusters: deps.clusters,
      asyncClient: this.asyncClient,
      clock,
      runtime: deps.runtime,
      random: mathRandom,
      stats: deps.stats,
      node: bootstrap.node,
      localAddress: bootstrap.localAddress,
    });
    this.filterContext = {
      clusters: deps.clusters,
      healthCheckFailed: deps.healthCheckFailed,
      serviceCluster: deps.bootstrap.node.cluster,
      clock: deps.clock,
      httpFilters: deps.httpFilters,
      asyncClient: this.asyncClient,
    };
  }

  /**
   * The filter chains of `bootstrap.listeners[index]`, their TLS contexts loaded.
   * @param statsAddress the bound address the listener's stats are named by (listener.<address>.ssl.*)
   * @throws FieldError naming the field under `static_resources.listeners[index]` it cannot build
   */
  listenerFilter(index: number, statsAddress = this.deps.bootstrap.listeners[index].address): FilterChainManager {
    const config = this.deps.bootstrap.listeners[index];
    return atField(`static_resources.listeners[${index}]`, () => this.filterChains(config, addressString(statsAddress), () => this.deps.drain));
  }

  /**
   * The filter chains of a listener LDS brought, each draining by `drainOf(index)` (its own drain
   * and the process's), its TLS contexts loaded.
   * @throws FieldError naming the field under the listener it cannot build
   */
  dynamicListenerFilter(config: ListenerConfig, statsAddress: SocketAddress, drainOf: (chain: number) => DrainDecider): FilterChainManager {
    return this.filterChains(config, addressString(statsAddress), drainOf);
  }

  private filterChains(config: ListenerConfig, statsAddress: string, drainOf: (chain: number) => DrainDecider): FilterChainManager {
    const chains = config.filterChains;
    if (chains.length === 0) throw new FieldError('filter_chains', 'no filter chains specified');
    const selector = new FilterChainSelector(
      chains.map((chain) => chain.match),
      addressString(config.address),
    );
    const listenerScope = this.deps.stats.scope(`listener.${sanitizeStatName(statsAddress)}`);
    const sslStats = new DownstreamSslStats(listenerScope.scope('ssl'));
    let factoryStats: SslSocketFactoryStats | null = null;
    const built = chains.map((chain, i): FilterChain => {
      const filters = chain.filters;
      if (filters.length !== 1) {
        throw new FieldError(`filter_chains[${i}].filters`, `the filter chain must hold exactly one (terminal) filter, got ${filters.length}`);
      }
      const transport = chain.transportSocket;
      const tls =
        transport === null || transport.kind === 'raw_buffer'
          ? null
          : atField(
              `filter_chains[${i}].transport_socket.typed_config.common_tls_context`,
              () => new DownstreamTlsSocketFactory(transport.context, sslStats, (factoryStats ??= new SslSocketFactoryStats(listenerScope, 'server')), this.deps.secrets),
            );
      return { filter: atField(`filter_chains[${i}].filters[0].typed_config`, () => this.filterFactory(config, filters[0], drainOf(i))), tls };
    });
    const kinds = new Set(config.listenerFilters.map((filter) => filter.kind));
    const inspector = kinds.has('tls_inspector') ? new TlsInspector(new TlsInspectorStats(this.deps.stats)) : null;
    return new FilterChainManager(built, selector, {
      originalDst: kinds.has('original_dst'),
      tlsInspector: inspector,
      timeoutMs: config.listenerFiltersTimeoutMs,
      continueOnTimeout: config.continueOnListenerFiltersTimeout,
    });
  }

  /** The tracers stop: their timers go and their reports in flight are cancelled. */
  close(): void {
    this.tracers.close();
  }

  private readonly tracerFor = (provider: TracerConfig | null): Tracer | null => {
    const config = provider ?? this.deps.bootstrap.tracing;
    return config === null ? null : this.tracers.tracer(config);
  };

  private readonly accessLogs = (entries: readonly AccessLogEntryConfig[]): readonly AccessLog[] => {
    const context = this.deps.accessLogs;
    return context === null ? [] : createAccessLogs(entries, context);
  };

  private filterFactory(listener: ListenerConfig, filter: NetworkFilterConfig, drain: DrainDecider): NetworkFilterFactory {
    const creator = this.deps.networkFilters.get(filter.name);
    // Validation admits the registered network filters only.
    if (creator === undefined) throw new FieldError('name', `no network filter named '${filter.name}' is registered`);
    const { stats, clusters, log, ids, bootstrap, runtime, overload } = this.deps;
    return creator.create(filter, {
      stats,
      clusters,
      drain,
      overload,
      log,
      ids,
      runtime,
      localAddress: bootstrap.localAddress,
      node: bootstrap.node,
      bufferLimitBytes: listener.perConnectionBufferLimitBytes,
      writeBatch: this.deps.writeBatch ?? null,
      filterContext: this.filterContext,
      accessLogs: this.accessLogs,
      asyncClient: this.asyncClient,
      trafficDirection: listener.trafficDirection,
      tracerFor: this.tracerFor,
      routeConfigs: this.deps.routeConfigs,
    });
  }
}

// A worker's listeners (Envoy's per-worker connection handler): each adopts a listening
// socket, accounts for its connections and hands every accepted connection to the terminal
// network filter of its filter chain (tcp_proxy or http_connection_manager).

import type * as net from 'node:net';
import type { Bootstrap, ListenerConfig, NetworkFilterConfig } from '../config/model';
import { HttpConnectionManagerFactory } from '../filters/network/http_connection_manager';
import { TcpProxyFactory } from '../filters/network/tcp_proxy';
import type { Clock } from '../common/clock';
import type { HttpFilterContext } from '../filters/http/http_filter_registry';
import type { LoggerFactory } from '../log/logger_api';
import type { RuntimeSource } from '../runtime/live_runtime';
import type { DrainDecider } from '../server/drain_decider';
import type { Counter, Gauge, Histogram, StatsStore } from '../stats/stats';
import { sanitizeStatName } from '../stats/stats';
import { addressString } from '../upstream/address';
import type { ClusterManager } from '../upstream/cluster_manager';
import type { NetworkFilterFactory } from './network_filter';

export interface ListenerManagerDeps {
  /** The configuration the listeners come from; its localAddress feeds x-forwarded-for. */
  readonly bootstrap: Bootstrap;
  readonly stats: StatsStore;
  readonly clusters: ClusterManager;
  readonly log: LoggerFactory;
  readonly drain: DrainDecider;
  readonly runtime: RuntimeSource;
  /** The admin /healthcheck/fail state as this worker knows it (the health check filter's input). */
  readonly healthCheckFailed: () => boolean;
  /** Times what HTTP filters cache (the health check filter's cache_time). */
  readonly clock: Clock;
}

/** A listener whose filter chains this data plane cannot run. */
export class ListenerConfigError extends Error {
  constructor(listener: string, message: string) {
    super(`listener '${listener}': ${message}`);
    this.name = 'ListenerConfigError';
  }
}

class ActiveListener {
  readonly connections = new Set<net.Socket>();
  private readonly cxTotal: Counter;
  private readonly cxActive: Gauge;
  private readonly cxDestroy: Counter;
  private readonly cxLength: Histogram;

  constructor(
    readonly config: ListenerConfig,
    readonly server: net.Server,
    readonly filter: NetworkFilterFactory,
    stats: StatsStore,
    private readonly totalConnections: Gauge,
  ) {
    // Envoy names listener stats by the bound address: listener.127.0.0.1_10000.*
    const bound = server.address() as net.AddressInfo;
    const scope = stats.scope(`listener.${sanitizeStatName(addressString({ address: bound.address, port: bound.port }))}`);
    this.cxTotal = scope.counter('downstream_cx_total');
    this.cxActive = scope.gauge('downstream_cx_active');
    this.cxDestroy = scope.counter('downstream_cx_destroy');
    this.cxLength = scope.histogram('downstream_cx_length_ms', 'milliseconds');
    server.on('connection', this.onConnection);
  }

  private readonly onConnection = (socket: net.Socket): void => {
    socket.setNoDelay(true);
    this.connections.add(socket);
    this.cxTotal.inc();
    this.cxActive.inc();
    this.totalConnections.inc();
    const openedMs = performance.now();
    socket.once('close', () => {
      this.cxLength.recordValue(performance.now() - openedMs);
      this.connections.delete(socket);
      this.cxActive.dec();
      this.cxDestroy.inc();
      this.totalConnections.dec();
    });
    this.filter.onNewConnection(socket);
  };
}

export class ListenerManager {
  private readonly listeners: ActiveListener[] = [];
  private readonly totalConnections: Gauge;
  private readonly filterContext: HttpFilterContext;

  constructor(private readonly deps: ListenerManagerDeps) {
    this.totalConnections = deps.stats.gauge('server.total_connections');
    this.filterContext = {
      clusters: deps.clusters,
      healthCheckFailed: deps.healthCheckFailed,
      serviceCluster: deps.bootstrap.node.cluster,
      clock: deps.clock,
    };
  }

  /**
   * Serves `config` on `server`, which is already listening (a socket the supervisor bound,
   * adopted with `net.createServer().listen({ fd })`). Throws ListenerConfigError for a
   * filter chain the data plane cannot run.
   */
  addListener(config: ListenerConfig, server: net.Server): void {
    const filter = this.terminalFilter(config);
    this.listeners.push(new ActiveListener(config, server, filter, this.deps.stats, this.totalConnections));
    this.deps.log('conn_handler').info(`listener '${config.name}' serving`);
  }

  /** Stops accepting connections (on the named listeners, or all); established ones carry on. Returns how many stopped. */
  stopListeners(names?: ReadonlySet<string>): number {
    let stopped = 0;
    for (const listener of this.listeners) {
      if (names !== undefined && !names.has(listener.config.name)) continue;
      if (listener.server.listening) {
        listener.server.close();
        stopped++;
      }
    }
    return stopped;
  }

  /** The drain time is over: each filter closes its connections that carry nothing. */
  closeIdleConnections(): void {
    for (const listener of this.listeners) listener.filter.closeIdleConnections();
  }

  /** Stops accepting and closes every connection; resolves when all are gone. */
  async close(): Promise<void> {
    this.stopListeners();
    const closed: Promise<void>[] = [];
    for (const listener of this.listeners) {
      for (const socket of listener.connections) {
        closed.push(new Promise((resolve) => socket.once('close', () => resolve())));
        socket.destroy();
      }
    }
    await Promise.all(closed);
  }

  connectionCount(): number {
    return this.listeners.reduce((n, l) => n + l.connections.size, 0);
  }

  private terminalFilter(config: ListenerConfig): NetworkFilterFactory {
    if (config.filterChains.length !== 1) {
      throw new ListenerConfigError(config.name, `exactly one filter chain is supported, got ${config.filterChains.length}`);
    }
    const filters = config.filterChains[0].filters;
    if (filters.length !== 1) {
      throw new ListenerConfigError(config.name, `the filter chain must hold exactly one (terminal) filter, got ${filters.length}`);
    }
    return this.filterFactory(config, filters[0]);
  }

  private filterFactory(listener: ListenerConfig, filter: NetworkFilterConfig): NetworkFilterFactory {
    const { stats, clusters, drain, log, bootstrap, runtime } = this.deps;
    const bufferLimitBytes = listener.perConnectionBufferLimitBytes;
    switch (filter.kind) {
      case 'tcp_proxy':
        return new TcpProxyFactory(filter, { stats, clusters, bufferLimitBytes });
      case 'http_connection_manager':
        return new HttpConnectionManagerFactory(filter, {
          stats,
          clusters,
          drain,
          log: log('http'),
          bufferLimitBytes,
          localAddress: bootstrap.localAddress,
          runtime,
          filterContext: this.filterContext,
        });
    }
  }
}

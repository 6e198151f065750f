// A worker's listeners (Envoy's per-worker connection handler): each adopts a listening
// socket, accounts for its connections and hands every accepted connection to the terminal
// network filter of its filter chain (tcp_proxy or http_connection_manager).

import type * as net from 'node:net';
import type { ListenerConfig } from '../config/model';
import type { LoggerFactory } from '../log/logger_api';
import type { Counter, Gauge, Histogram, StatsStore } from '../stats/stats';
import { sanitizeStatName } from '../stats/stats';
import { addressString } from '../upstream/address';
import type { NetworkFilterFactory } from './network_filter';

export interface ListenerManagerDeps {
  readonly stats: StatsStore;
  readonly log: LoggerFactory;
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

  constructor(private readonly deps: ListenerManagerDeps) {
    this.totalConnections = deps.stats.gauge('server.total_connections');
  }

  /**
   * Serves `config` on `server`, which is already listening (a socket the supervisor bound,
   * adopted with `net.createServer().listen({ fd })`), through `filter`, its filter chain as
   * NetworkFilterBuilder built it.
   */
  addListener(config: ListenerConfig, server: net.Server, filter: NetworkFilterFactory): void {
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
}

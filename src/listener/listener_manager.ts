// A worker's listeners (Envoy's per-worker connection handler): each adopts a listening
// socket, accounts for its connections, runs its listener filters on every accepted connection,
// picks the connection's filter chain, and hands it, through the chain's transport socket
// (plaintext or TLS), to the chain's terminal network filter (tcp_proxy or
// http_connection_manager).

import type * as net from 'node:net';
import { getSystemErrorMap } from 'node:util';
import type { ListenerConfig } from '../config/model';
import type { ConnectionIds } from '../log/connection_log';
import type { Logger, LoggerFactory } from '../log/logger_api';
import type { Counter, Gauge, Histogram, StatsStore } from '../stats/stats';
import { sanitizeStatName } from '../stats/stats';
import { addressString } from '../network/socket_address';
import type { FilterChainManager } from './filter_chain_manager';
import type { ConnectionFacts } from './filter_chain_selector';
import { restoreLocalAddress, restoreOriginalDestination } from './original_dst';
import type { InspectedHello } from './tls_inspector';
import type { DownstreamAddresses } from '../network/downstream_addresses';
import type { AcceptError, ListenSocket } from './listen_socket';
import type { Clock, TimeoutHandle } from '../common/clock';
import type { DrainDecider } from '../server/drain_decider';
import type { RuntimeSource } from '../runtime/live_runtime';
import { GLOBAL_CONNECTIONS_CELLS, GlobalConnectionLimit } from './global_connection_limit';
import { type BalanceGroup, countsName, ExactConnectionBalancer } from './exact_connection_balancer';

/** A failed accept() is logged at most this often; the lines between are counted in the next. */
const ACCEPT_ERROR_LOG_INTERVAL_MS = 1000;

export interface ListenerManagerDeps {
  readonly stats: StatsStore;
  /** This process's name in the listeners' per-handler stats, as Envoy's: `worker_<index>`. */
  readonly handler: string;
  readonly log: LoggerFactory;
  /** Numbers each accepted connection for its log lines (`[C<id>]`). */
  readonly ids: ConnectionIds;
  /** Times listener_filters_timeout. */
  readonly clock: Clock;
  /** overload.global_downstream_max_connections. */
  readonly runtime: RuntimeSource;
  /** The workers among which exact_balance listeners share out their connections. */
  readonly balanceGroup: BalanceGroup;
}

class ActiveListener {
  /** Each connection, with performance.now() when it was accepted. */
  readonly connections = new Map<net.Socket, number>();
  private readonly cxTotal: Counter;
  private readonly cxActive: Gauge;
  /** This worker's share of the two above: how the workers split the listener's connections. */
  private readonly handlerCxTotal: Counter;
  private readonly handlerCxActive: Gauge;
  private readonly cxDestroy: Counter;
  private readonly cxLength: Histogram;
  private readonly noFilterChainMatch: Counter;
  private readonly preCxTimeout: Counter;
  private readonly preCxActive: Gauge;
  private readonly acceptErrors: Counter;
  private readonly globalOverflow: Counter;
  private lastAcceptErrorLogMs = -Infinity;
  private unloggedAcceptErrors = 0;
  /**
   * Every connection's 'close' listener, the socket its `this`: one function for the listener
   * rather than a closure (and once() wrapper) per connection, which cost an idle one 230 bytes.
   */
  private readonly onConnectionClose: (this: net.Socket) => void;

  constructor(
    readonly config: ListenerConfig,
    readonly server: ListenSocket,
    readonly filter: FilterChainManager,
    stats: StatsStore,
    handler: string,
    private readonly totalConnections: Gauge,
    private readonly globalLimit: GlobalConnectionLimit,
    private readonly ids: ConnectionIds,
    /** `conn_handler`. */
    private readonly log: Logger,
    private readonly clock: Clock,
  ) {
    // Envoy names listener stats by the bound address: listener.127.0.0.1_10000.*
    const bound = server.address();
    const scope = stats.scope(`listener.${sanitizeStatName(addressString({ address: bound.address, port: bound.port }))}`);
    this.cxTotal = scope.counter('downstream_cx_total');
    this.cxActive = scope.gauge('downstream_cx_active');
    const handlerScope = scope.scope(handler);
    this.handlerCxTotal = handlerScope.counter('downstream_cx_total');
    this.handlerCxActive = handlerScope.gauge('downstream_cx_active');
    this.cxDestroy = scope.counter('downstream_cx_destroy');
    this.cxLength = scope.histogram('downstream_cx_length_ms', 'milliseconds');
    this.noFilterChainMatch = scope.counter('no_filter_chain_match');
    this.preCxTimeout = scope.counter('downstream_pre_cx_timeout');
    this.preCxActive = scope.gauge('downstream_pre_cx_active');
    // Envoy has no stat for a failed accept() (its downstream_cx_overflow is the connection limit's).
    this.acceptErrors = scope.counter('downstream_accept_error');
    this.globalOverflow = scope.counter('downstream_global_cx_overflow');
    const listener = this;
    this.onConnectionClose = function (this: net.Socket) {
      listener.connectionClosed(this);
    };
    server.on('connection', this.onConnection);
    server.on('acceptError', this.onAcceptError);
  }

  /** Takes no more connections from the socket (which another listener may go on using); those it has carry on. */
  detach(): void {
    this.server.off('connection', this.onConnection);
    this.server.off('acceptError', this.onAcceptError);
  }

  private readonly onAcceptError = (error: AcceptError): void => {
    this.acceptErrors.inc();
    this.unloggedAcceptErrors++;
    const now = performance.now();
    if (now - this.lastAcceptErrorLogMs < ACCEPT_ERROR_LOG_INTERVAL_MS) return;
    const { address, port } = this.server.address();
    const description = getSystemErrorMap().get(-error.errno)?.[1] ?? 'unknown error';
    this.log.warn(
      `listener '${this.config.name}' (${address}:${port}): accept() failed: ${description} (${error.code}); ` +
        `${this.unloggedAcceptErrors} failure(s) since the last report; connections wait in the backlog`,
    );
    this.lastAcceptErrorLogMs = now;
    this.unloggedAcceptErrors = 0;
  };

  private readonly onConnection = (socket: net.Socket): void => {
    if (!this.globalLimit.tryAcquire()) {
      // As Envoy: closed before anything is made for it, counted by the listener only.
      this.globalOverflow.inc();
      socket.destroy();
      return;
    }
    socket.setNoDelay(true);
    this.connections.set(socket, performance.now());
    this.cxTotal.inc();
    this.cxActive.inc();
    this.handlerCxTotal.inc();
    this.handlerCxActive.inc();
    this.totalConnections.inc();
    socket.on('close', this.onConnectionClose);
    // Synchronous: whatever comes after it, the TLS inspector included, sees the restored address.
    if (this.filter.listenerFilters.originalDst) restoreOriginalDestination(socket);
    if (this.filter.listenerFilters.tlsInspector === null) this.startFilterChain(socket, null);
    else this.inspect(socket);
  };

  private connectionClosed(socket: net.Socket): void {
    // Set when accepted; 'close' comes once.
    const openedMs = this.connections.get(socket)!;
    this.connections.delete(socket);
    this.globalLimit.release();
    this.cxLength.recordValue(performance.now() - openedMs);
    this.cxActive.dec();
    this.handlerCxActive.dec();
    this.cxDestroy.inc();
    this.totalConnections.dec();
  }

  /**
   * Reads the first bytes until the TLS inspector knows, then puts them back for the chain.
   * The listener filters time out after listener_filters_timeout, as Envoy's do.
   */
  private inspect(socket: net.Socket): void {
    const { tlsInspector, timeoutMs, continueOnTimeout } = this.filter.listenerFilters;
    const inspector = tlsInspector!;
    let received: Buffer = Buffer.alloc(0);
    let timer: TimeoutHandle | null = null;
    this.preCxActive.inc();
    const finish = () => {
      this.preCxActive.dec();
      if (timer !== null) this.clock.clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('error', onError);
    };
    const done = (hello: InspectedHello | null) => {
      finish();
      if (hello === null) {
        socket.destroy();
        return;
      }
      if (received.length > 0) socket.unshift(received);
      this.startFilterChain(socket, hello);
    };
    const onData = (data: Buffer) => {
      received = received.length === 0 ? data : Buffer.concat([received, data]);
      const hello = inspector.inspect(received);
      if (hello !== undefined) done(hello);
    };
    const onEnd = () => {
      finish();
      inspector.closedEarly(false);
      socket.destroy();
    };
    const onError = () => {
      finish();
      inspector.closedEarly(true);
      socket.destroy();
    };
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('error', onError);
    if (timeoutMs > 0) {
      timer = this.clock.setTimeout(() => {
        this.preCxTimeout.inc();
        if (continueOnTimeout) done({ transportProtocol: 'raw_buffer', serverName: '', applicationProtocols: [] });
        else done(null);
      }, timeoutMs);
    }
  }

  /** Picks the chain and hands the connection over, through TLS when the chain terminates it. */
  private startFilterChain(socket: net.Socket, hello: InspectedHello | null): void {
    const facts: ConnectionFacts = {
      // Node keeps the address it looks up on the socket: a connection holds it only when needed.
      destinationPort: this.filter.matchesDestinationPort ? (socket.localPort ?? 0) : 0,
      serverName: hello?.serverName ?? '',
      // Without a listener filter that says otherwise, a connection is raw_buffer, as in Envoy.
      transportProtocol: hello?.transportProtocol ?? 'raw_buffer',
      applicationProtocols: hello?.applicationProtocols ?? [],
    };
    const chain = this.filter.select(facts);
    if (chain === null) {
      this.noFilterChainMatch.inc();
      socket.destroy();
      return;
    }
    // As Envoy's connection handler, a connection is numbered once its filter chain takes it.
    const id = this.ids.nextConnection();
    if (this.log.enabled('debug')) this.log.debug(`[C${id}] new connection`);
    if (chain.tls === null) {
      chain.filter.onNewConnection(socket, id);
      return;
    }
    // The TLS socket reads the socket's handle itself: the put-back bytes must stay buffered
    // (paused) until it takes them over.
    socket.pause();
    const tlsSocket = chain.tls.secure(socket, (secured) => chain.filter.onNewConnection(secured, id));
    // Closed already: the chain's SDS secrets have not come.
    if (tlsSocket === null) return;
    const restored = socket as net.Socket & DownstreamAddresses;
    if (restored.localAddressRestored === true) restoreLocalAddress(tlsSocket, restored.localAddress!, restored.localPort!);
    // Closing the plain socket (drain, shutdown) closes the TLS one with it.
    socket.once('close', () => tlsSocket.destroy());
  }
}

/** A filter chain of a listener LDS brought: its own drain, which starts when the chain is removed or replaced. */
export interface ListenerDrain extends DrainDecider {
  startDrainSequence(onComplete: () => void): void;
  close(): void;
}

export class ListenerManager {
  private readonly listeners: ActiveListener[] = [];
  /** Listeners LDS removed or replaced whose connections are draining, with their chains' drains. */
  private readonly retired = new Map<ActiveListener, readonly ListenerDrain[]>();
  /** The drains of the filter chains of the listeners LDS brought, by listener, one per chain. */
  private readonly drains = new Map<ActiveListener, readonly ListenerDrain[]>();
  private readonly totalConnections: Gauge;
  private readonly globalLimit: GlobalConnectionLimit;
  /** `conn_handler`. */
  private readonly connHandlerLog: Logger;
  /** False while the overload manager's stop_accepting_connections holds every listener. */
  private accepting = true;

  constructor(private readonly deps: ListenerManagerDeps) {
    this.totalConnections = deps.stats.gauge('server.total_connections');
    this.globalLimit = new GlobalConnectionLimit(deps.stats.cells(GLOBAL_CONNECTIONS_CELLS, 1), deps.runtime);
    this.connHandlerLog = deps.log('conn_handler').forFile(__filename);
  }

  /**
   * Serves `config` on `server` (a socket the supervisor bound) through `filter`, its filter
   * chain as NetworkFilterBuilder built it.
   */
  addListener(config: ListenerConfig, server: ListenSocket, filter: FilterChainManager, chainDrains?: readonly ListenerDrain[]): void {
    const listener = new ActiveListener(config, server, filter, this.deps.stats, this.deps.handler, this.totalConnections, this.globalLimit, this.deps.ids, this.connHandlerLog, this.deps.clock);
    this.listeners.push(listener);
    // A listener LDS changed keeps its socket's balancer, and the counts of the connections open.
    // One worker has no other to balance with.
    const balanced = config.exactBalance && this.deps.balanceGroup.workers > 1;
    if (balanced !== server.balanced) server.balanceWith(balanced ? this.balancerFor(server) : null);
    // A listener LDS adds while accepting is stopped waits as the others do.
    if (!this.accepting) server.setAccepting(false);
    if (chainDrains !== undefined) this.drains.set(listener, chainDrains);
    this.connHandlerLog.info(`listener '${config.name}' serving`);
  }

  private balancerFor(server: ListenSocket): ExactConnectionBalancer {
    const { address, port } = server.address();
    const name = sanitizeStatName(addressString({ address, port }));
    const group = this.deps.balanceGroup;
    return new ExactConnectionBalancer(group, name, this.deps.stats.cells(countsName(group, name), group.workers));
  }

  /** The listener of `name` that accepts now (its socket, filter chains and their drains); null when none does. */
  serving(name: string): { readonly server: ListenSocket; readonly filter: FilterChainManager; readonly chainDrains: readonly ListenerDrain[] } | null {
    const listener = this.listeners.find((l) => l.config.name === name && l.server.listening);
    return listener === undefined ? null : { server: listener.server, filter: listener.filter, chainDrains: this.drains.get(listener) ?? [] };
  }

  /**
   * LDS changed a listener and kept its address: `filter` takes the socket's connections from
   * now on; the old filter chains' connections drain, but for those of the chains in
   * `keptChains` (unchanged, in a change of filter chains only: Envoy's in-place update), which
   * `filter` carries on with, their drains with them.
   * @throws Error when no listener of that name serves (see serving)
   */
  replaceListener(config: ListenerConfig, filter: FilterChainManager, chainDrains: readonly ListenerDrain[], keptChains: ReadonlySet<number>): void {
    const old = this.listeners.find((l) => l.config.name === config.name && l.server.listening);
    if (old === undefined) throw new Error(`no listener '${config.name}' serves`);
    old.detach();
    this.listeners.splice(this.listeners.indexOf(old), 1);
    this.addListener(config, old.server, filter, chainDrains);
    this.retire(old, keptChains);
  }

  /** LDS removed a listener: it stops accepting and its connections drain. False when none serves by that name. */
  removeListener(name: string): boolean {
    const old = this.listeners.find((l) => l.config.name === name);
    if (old === undefined) return false;
    this.listeners.splice(this.listeners.indexOf(old), 1);
    old.server.close();
    this.retire(old, new Set());
    return true;
  }

  /**
   * On each chain but the kept ones, HTTP responses close their connections per the drain
   * strategy, and at its end the idle ones close.
   */
  private retire(listener: ActiveListener, keptChains: ReadonlySet<number>): void {
    const drains = this.drains.get(listener);
    this.drains.delete(listener);
    if (drains === undefined) return;
    this.retired.set(listener, drains);
    let draining = 0;
    drains.forEach((drain, chain) => {
      if (keptChains.has(chain)) return;
      draining++;
      drain.startDrainSequence(() => {
        listener.filter.closeIdleConnectionsOf(chain);
        if (--draining === 0) this.retired.delete(listener);
      });
    });
    if (draining === 0) this.retired.delete(listener);
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

  /** The overload manager's stop_accepting_connections: every listener stops (or resumes) taking connections. */
  setAccepting(accepting: boolean): void {
    this.accepting = accepting;
    for (const listener of this.listeners) listener.server.setAccepting(accepting);
  }

  /** The drain time is over: each filter closes its connections that carry nothing. */
  closeIdleConnections(): void {
    for (const listener of [...this.listeners, ...this.retired.keys()]) listener.filter.closeIdleConnections();
  }

  /** Stops accepting and closes every connection; resolves when all are gone. */
  async close(): Promise<void> {
    this.stopListeners();
    for (const drain of [...this.drains.values(), ...this.retired.values()].flat()) drain.close();
    const closed: Promise<void>[] = [];
    for (const listener of [...this.listeners, ...this.retired.keys()]) {
      for (const socket of listener.connections.keys()) {
        closed.push(new Promise((resolve) => socket.once('close', () => resolve())));
        socket.destroy();
      }
    }
    await Promise.all(closed);
  }

  connectionCount(): number {
    return [...this.listeners, ...this.retired.keys()].reduce((n, l) => n + l.connections.size, 0);
  }
}

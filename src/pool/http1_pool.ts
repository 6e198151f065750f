// The HTTP/1.1 connection pool of one upstream host at one routing priority (Envoy's http1
// ConnPoolImpl on ConnPoolImplBase): one request per connection at a time, idle connections kept
// alive and reused most-recent-first, a new connection opened for each request that finds none
// idle and none about to connect, within the cluster's circuit breakers: a request waits only if
// max_pending_requests allows, a connection opens only if max_connections does (else the request
// waits for one to free up), and a request is given a connection only if max_requests allows.

import type { ConnectionPool, PoolCallbacks, ResponseDecoder, StreamResetReason } from '../http/codec';
import type { HostStats } from '../stats/stats';
import type { ResourceManager } from '../upstream/resource_manager';
import { type ConnectionOwner, Http1ClientConnection } from './http1_client_connection';
import type { DownstreamAddresses } from '../upstream/upstream_network_filter';
import type { ConnectionTarget } from './upstream_connection';

/** A request waiting for a connection. */
interface PendingStream {
  readonly decoder: ResponseDecoder;
  readonly callbacks: PoolCallbacks;
}

export class Http1ConnectionPool implements ConnectionPool, ConnectionOwner {
  readonly protocol = 'http1';
  private readonly idle: Http1ClientConnection[] = [];
  private readonly pending: PendingStream[] = [];
  private readonly connections = new Set<Http1ClientConnection>();
  private connecting = 0;
  private draining = false;
  private retired = false;

  /**
   * `resources`: the circuit breakers of the pool's priority. The pool's own unit of
   * max_connection_pools was taken by its maker; the pool gives it back when drained or closed.
   */
  constructor(
    private readonly target: ConnectionTarget,
    private readonly resources: ResourceManager,
  ) {}

  get hostStats(): HostStats {
    return this.target.hostStats;
  }

  /**
   * Gives `callbacks` a connection now, or once one is ready (or failed). A connection opened
   * for it serves `downstream` (see UpstreamNetworkFilter).
   */
  newStream(decoder: ResponseDecoder, callbacks: PoolCallbacks, downstream: DownstreamAddresses): void {
    const connection = this.idle.pop();
    if (connection !== undefined) {
      if (!this.attach(connection, decoder, callbacks)) this.idle.push(connection);
      return;
    }
    const stats = this.target.cluster.stats;
    if (!this.resources.pendingRequests.tryAcquire()) {
      stats.counters.upstream_rq_pending_overflow.inc();
      callbacks.onPoolFailure('overflow');
      return;
    }
    stats.counters.upstream_rq_pending_total.inc();
    stats.gauges.upstream_rq_pending_active.inc();
    this.pending.push({ decoder, callbacks });
    this.tryCreateConnection(downstream);
  }

  /** Withdraws a request still waiting for a connection. */
  cancel(callbacks: PoolCallbacks): void {
    const index = this.pending.findIndex((p) => p.callbacks === callbacks);
    if (index < 0) return;
    this.pending.splice(index, 1);
    this.leavePending();
  }

  /** No connection, open or opening, and nobody waiting: the pool may be freed (max_connection_pools). */
  get idleForever(): boolean {
    return this.connections.size === 0 && this.pending.length === 0;
  }

  /** The host left the cluster: close idle connections now, busy ones when their request ends. */
  drain(): void {
    this.draining = true;
    this.retire();
    for (const connection of this.idle.splice(0)) connection.close();
  }

  /** Fails waiting requests and closes every connection. */
  close(): void {
    this.draining = true;
    this.retire();
    this.failPending('local reset');
    for (const connection of this.connections) connection.close();
  }

  // ---- ConnectionOwner ------------------------------------------------------------------

  onConnectionConnected(connection: Http1ClientConnection): void {
    this.connecting--;
    this.release(connection);
  }

  onConnectionFailure(connection: Http1ClientConnection): void {
    this.connecting--;
    this.connections.delete(connection);
    this.resources.connections.release();
    // As Envoy does: a host that refuses connections fails everything waiting for it.
    this.failPending('connection failure');
  }

  onStreamDone(connection: Http1ClientConnection, reusable: boolean): void {
    this.target.cluster.stats.gauges.upstream_rq_active.dec();
    this.target.hostStats.rq_active.dec();
    this.resources.requests.release();
    const max = this.target.cluster.maxRequestsPerConnection;
    if (reusable && !this.draining && (max === 0 || connection.requestCount < max)) {
      this.release(connection);
    } else {
      connection.close();
    }
  }

  onConnectionClosed(connection: Http1ClientConnection): void {
    this.connections.delete(connection);
    this.resources.connections.release();
    const index = this.idle.indexOf(connection);
    if (index >= 0) this.idle.splice(index, 1);
    // Requests waiting because max_connections was reached may now get a connection.
    if (this.pending.length > 0 && !this.draining) this.tryCreateConnection(connection.downstream);
  }

  // ---- internals -----------------------------------------------------------------------------

  /**
   * Opens a connection for the waiting requests that none opening will serve. Over
   * max_connections the requests wait for a connection to free up, unless the pool has none at
   * all: as Envoy does, it then opens one anyway, or requests queued here while other pools hold
   * every connection would never be served.
   */
  private tryCreateConnection(downstream: DownstreamAddresses): void {
    if (this.connecting >= this.pending.length) return;
    const connections = this.resources.connections;
    if (!connections.tryAcquire()) {
      this.target.cluster.stats.counters.upstream_cx_overflow.inc();
      if (this.connections.size > 0) return;
      connections.inc();
    }
    this.connecting++;
    this.connections.add(new Http1ClientConnection(this.target, this, downstream));
  }

  /** A connection is free: the oldest waiting request gets it, or it goes idle. */
  private release(connection: Http1ClientConnection): void {
    for (let next = this.pending.shift(); next !== undefined; next = this.pending.shift()) {
      this.leavePending();
      // A request refused by max_requests leaves the connection free for the next one.
      if (this.attach(connection, next.decoder, next.callbacks)) return;
    }
    if (this.draining) connection.close();
    else this.idle.push(connection);
  }

  private leavePending(): void {
    this.target.cluster.stats.gauges.upstream_rq_pending_active.dec();
    this.resources.pendingRequests.release();
  }

  /** Gives `connection` to `callbacks` if max_requests allows; false (and an overflow failure) if not. */
  private attach(connection: Http1ClientConnection, decoder: ResponseDecoder, callbacks: PoolCallbacks): boolean {
    const stats = this.target.cluster.stats;
    if (!this.resources.requests.tryAcquire()) {
      stats.counters.upstream_rq_pending_overflow.inc();
      callbacks.onPoolFailure('overflow');
      return false;
    }
    stats.counters.upstream_rq_total.inc();
    stats.gauges.upstream_rq_active.inc();
    this.target.hostStats.rq_total.inc();
    this.target.hostStats.rq_active.inc();
    connection.requestCount++;
    if (connection.requestCount === this.target.cluster.maxRequestsPerConnection) stats.counters.upstream_cx_max_requests.inc();
    callbacks.onPoolReady(connection.newStream(decoder), this.target.hostStats);
    return true;
  }

  private failPending(reason: StreamResetReason): void {
    const failed = this.pending.splice(0);
    const stats = this.target.cluster.stats;
    for (const { callbacks } of failed) {
      this.leavePending();
      stats.counters.upstream_rq_pending_failure_eject.inc();
      callbacks.onPoolFailure(reason);
    }
  }

  /** Gives back the pool's unit of max_connection_pools, once. */
  private retire(): void {
    if (this.retired) return;
    this.retired = true;
    this.resources.connectionPools.release();
  }
}

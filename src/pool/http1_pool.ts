// The HTTP/1.1 connection pool of one upstream host (Envoy's http1 ConnPoolImpl): one request
// per connection at a time, idle connections kept alive and reused most-recent-first, a new
// connection opened for each request that finds none idle and none about to connect.

import type { HostStats } from '../stats/stats';
import { type ConnectionOwner, Http1ClientConnection, type StreamResetReason } from './http1_client_connection';
import type { DownstreamAddresses } from '../upstream/upstream_network_filter';
import type { ConnectionTarget } from './upstream_connection';

/** What a request waiting for a connection is told. */
export interface PoolCallbacks {
  onPoolReady(connection: Http1ClientConnection): void;
  onPoolFailure(reason: StreamResetReason): void;
}

export class Http1ConnectionPool implements ConnectionOwner {
  private readonly idle: Http1ClientConnection[] = [];
  private readonly pending: PoolCallbacks[] = [];
  private readonly connections = new Set<Http1ClientConnection>();
  private connecting = 0;
  private draining = false;

  constructor(private readonly target: ConnectionTarget) {}

  get hostStats(): HostStats {
    return this.target.hostStats;
  }

  /**
   * Gives `callbacks` a connection now, or once one is ready (or failed). A connection opened
   * for it serves `downstream` (see UpstreamNetworkFilter).
   */
  newStream(callbacks: PoolCallbacks, downstream: DownstreamAddresses): void {
    const connection = this.idle.pop();
    if (connection !== undefined) {
      this.attach(connection, callbacks);
      return;
    }
    const stats = this.target.cluster.stats;
    stats.counters.upstream_rq_pending_total.inc();
    stats.gauges.upstream_rq_pending_active.inc();
    this.pending.push(callbacks);
    if (this.connecting < this.pending.length) {
      this.connecting++;
      this.connections.add(new Http1ClientConnection(this.target, this, downstream));
    }
  }

  /** Withdraws a request still waiting for a connection. */
  cancel(callbacks: PoolCallbacks): void {
    const index = this.pending.indexOf(callbacks);
    if (index < 0) return;
    this.pending.splice(index, 1);
    this.target.cluster.stats.gauges.upstream_rq_pending_active.dec();
  }

  /** The host left the cluster: close idle connections now, busy ones when their request ends. */
  drain(): void {
    this.draining = true;
    for (const connection of this.idle.splice(0)) connection.close();
  }

  /** Fails waiting requests and closes every connection. */
  close(): void {
    this.draining = true;
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
    // As Envoy does: a host that refuses connections fails everything waiting for it.
    this.failPending('connection failure');
  }

  onStreamDone(connection: Http1ClientConnection, reusable: boolean): void {
    this.target.cluster.stats.gauges.upstream_rq_active.dec();
    this.target.hostStats.rq_active.dec();
    const max = this.target.cluster.maxRequestsPerConnection;
    if (reusable && !this.draining && (max === 0 || connection.requestCount < max)) {
      this.release(connection);
    } else {
      connection.close();
    }
  }

  onConnectionClosed(connection: Http1ClientConnection): void {
    this.connections.delete(connection);
    const index = this.idle.indexOf(connection);
    if (index >= 0) this.idle.splice(index, 1);
  }

  // ---- internals -----------------------------------------------------------------------------

  /** A connection is free: the oldest waiting request gets it, or it goes idle. */
  private release(connection: Http1ClientConnection): void {
    const next = this.pending.shift();
    if (next === undefined) {
      if (this.draining) connection.close();
      else this.idle.push(connection);
      return;
    }
    this.target.cluster.stats.gauges.upstream_rq_pending_active.dec();
    this.attach(connection, next);
  }

  private attach(connection: Http1ClientConnection, callbacks: PoolCallbacks): void {
    const stats = this.target.cluster.stats;
    stats.counters.upstream_rq_total.inc();
    stats.gauges.upstream_rq_active.inc();
    this.target.hostStats.rq_total.inc();
    this.target.hostStats.rq_active.inc();
    connection.requestCount++;
    if (connection.requestCount === this.target.cluster.maxRequestsPerConnection) stats.counters.upstream_cx_max_requests.inc();
    callbacks.onPoolReady(connection);
  }

  private failPending(reason: StreamResetReason): void {
    const failed = this.pending.splice(0);
    const stats = this.target.cluster.stats;
    for (const callbacks of failed) {
      stats.gauges.upstream_rq_pending_active.dec();
      stats.counters.upstream_rq_pending_failure_eject.inc();
      callbacks.onPoolFailure(reason);
    }
  }
}

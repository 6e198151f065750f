// The HTTP/2 connection pool of one upstream host at one routing priority (Envoy 1.16's http2
// ConnPoolImpl on ConnPoolImplBase): streams are multiplexed on a connection up to
// max_concurrent_streams (and the peer's limit), then a new connection opens; a connection that
// reached max_requests_per_connection or got GOAWAY takes no new streams and closes when its last
// stream ends. The circuit breakers are the HTTP/1 pool's: max_pending_requests for requests
// waiting for a connection, max_connections for connections, max_requests for streams.

import type { Http2ProtocolOptions } from '../config/model';
import type { ConnectionPool, PoolCallbacks, ResponseDecoder, StreamResetReason } from '../http/codec';
import type { HostStats } from '../stats/stats';
import type { ResourceManager } from '../upstream/resource_manager';
import type { DownstreamAddresses } from '../upstream/upstream_network_filter';
import { Http2ClientConnection, type Http2ConnectionOwner } from './http2_client_connection';
import type { ConnectionTarget } from './upstream_connection';

interface PendingStream {
  readonly decoder: ResponseDecoder;
  readonly callbacks: PoolCallbacks;
}

export class Http2ConnectionPool implements ConnectionPool, Http2ConnectionOwner {
  readonly protocol = 'http2';
  private readonly pending: PendingStream[] = [];
  private readonly connections = new Set<Http2ClientConnection>();
  /** Connections opening, and the streams they will take between them. */
  private connecting = 0;
  private connectingCapacity = 0;
  private draining = false;
  private retired = false;
  private readonly options: Http2ProtocolOptions;

  /** As the HTTP/1 pool: the pool's unit of max_connection_pools was taken by its maker. */
  constructor(
    private readonly target: ConnectionTarget,
    private readonly resources: ResourceManager,
  ) {
    this.options = target.cluster.http2ProtocolOptions!;
  }

  get hostStats(): HostStats {
    return this.target.hostStats;
  }

  newStream(decoder: ResponseDecoder, callbacks: PoolCallbacks, downstream: DownstreamAddresses): void {
    const ready = this.readyConnection();
    if (ready !== null) {
      this.attach(ready, decoder, callbacks);
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

  cancel(callbacks: PoolCallbacks): void {
    const index = this.pending.findIndex((p) => p.callbacks === callbacks);
    if (index < 0) return;
    this.pending.splice(index, 1);
    this.leavePending();
  }

  get idleForever(): boolean {
    return this.connections.size === 0 && this.pending.length === 0;
  }

  /** Connections take no new streams and close (with GOAWAY) once their streams end. */
  drain(): void {
    this.draining = true;
    this.retire();
    for (const connection of this.connections) connection.drain();
  }

  close(): void {
    this.draining = true;
    this.retire();
    this.failPending('local reset');
    for (const connection of this.connections) connection.close();
  }

  // ---- Http2ConnectionOwner -------------------------------------------------------------------

  onConnectionConnected(connection: Http2ClientConnection): void {
    this.connecting--;
    this.connectingCapacity -= this.options.maxConcurrentStreams;
    if (this.draining) connection.drain();
    this.serve(connection);
  }

  onConnectionFailure(connection: Http2ClientConnection): void {
    this.connecting--;
    this.connectingCapacity -= this.options.maxConcurrentStreams;
    this.connections.delete(connection);
    this.resources.connections.release();
    // As Envoy does: a host that refuses connections fails everything waiting for it.
    this.failPending('connection failure');
  }

  onStreamDone(connection: Http2ClientConnection): void {
    const stats = this.target.cluster.stats;
    stats.gauges.upstream_rq_active.dec();
    this.target.hostStats.rq_active.dec();
    this.resources.requests.release();
    if (connection.draining) {
      if (connection.activeStreams === 0) connection.close();
      return;
    }
    this.serve(connection);
  }

  onGoAway(connection: Http2ClientConnection): void {
    if (connection.activeStreams === 0) connection.close();
    // Requests waiting for this connection need another.
    if (this.pending.length > 0 && !this.draining) this.tryCreateConnection(connection.downstream);
  }

  onConnectionClosed(connection: Http2ClientConnection): void {
    this.connections.delete(connection);
    this.resources.connections.release();
    if (this.pending.length > 0 && !this.draining) this.tryCreateConnection(connection.downstream);
  }

  // ---- internals -----------------------------------------------------------------------------

  /** A connected connection with room for a stream, or null. */
  private readyConnection(): Http2ClientConnection | null {
    for (const connection of this.connections) if (connection.capacity > 0) return connection;
    return null;
  }

  /** Waiting requests get streams on `connection` while it has room. */
  private serve(connection: Http2ClientConnection): void {
    while (this.pending.length > 0 && connection.capacity > 0) {
      const next = this.pending.shift()!;
      this.leavePending();
      this.attach(connection, next.decoder, next.callbacks);
    }
    if (this.pending.length > 0 && !this.draining) this.tryCreateConnection(connection.downstream);
  }

  /**
   * Opens a connection when those opening cannot take every waiting request. Over max_connections
   * the requests wait for a stream to free up, unless the pool has no connection at all (as the
   * HTTP/1 pool, and Envoy, do).
   */
  private tryCreateConnection(downstream: DownstreamAddresses): void {
    if (this.connectingCapacity >= this.pending.length) return;
    const connections = this.resources.connections;
    if (!connections.tryAcquire()) {
      this.target.cluster.stats.counters.upstream_cx_overflow.inc();
      if (this.connections.size > 0) return;
      connections.inc();
    }
    this.connecting++;
    this.connectingCapacity += this.options.maxConcurrentStreams;
    this.connections.add(new Http2ClientConnection(this.target, this, this.options, downstream));
  }

  private leavePending(): void {
    this.target.cluster.stats.gauges.upstream_rq_pending_active.dec();
    this.resources.pendingRequests.release();
  }

  /** A stream on `connection` for the request, if max_requests allows; an overflow failure if not. */
  private attach(connection: Http2ClientConnection, decoder: ResponseDecoder, callbacks: PoolCallbacks): void {
    const stats = this.target.cluster.stats;
    if (!this.resources.requests.tryAcquire()) {
      stats.counters.upstream_rq_pending_overflow.inc();
      callbacks.onPoolFailure('overflow');
      return;
    }
    stats.counters.upstream_rq_total.inc();
    stats.gauges.upstream_rq_active.inc();
    this.target.hostStats.rq_total.inc();
    this.target.hostStats.rq_active.inc();
    const encoder = connection.newStream(decoder);
    const max = this.target.cluster.maxRequestsPerConnection;
    if (max > 0 && connection.streamCount >= max) {
      stats.counters.upstream_cx_max_requests.inc();
      connection.draining = true;
    }
    callbacks.onPoolReady(encoder, this.target.hostStats);
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

  private retire(): void {
    if (this.retired) return;
    this.retired = true;
    this.resources.connectionPools.release();
  }
}

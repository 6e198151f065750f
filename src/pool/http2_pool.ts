// The HTTP/2 connection pool of one upstream host at one routing priority (Envoy 1.16's http2
// ConnPoolImpl on ConnPoolImplBase): streams are multiplexed on a connection up to
// max_concurrent_streams (and the peer's limit), then a new connection opens; a connection that
// reached max_requests_per_connection or got GOAWAY takes no new streams and closes when its last
// stream ends. The circuit breakers are the HTTP/1 pool's: max_pending_requests for requests
// waiting for a connection, max_connections for connections, max_requests for streams.

import type { Http2ProtocolOptions } from '../config/model';
import type { ConnectionPool, PoolCallbacks, ResponseDecoder } from '../http/codec';
import type { Logger } from '../log/logger_api';
import type { HostStats } from '../stats/stats';
import type { ResourceManager } from '../upstream/shared/resource_manager';
import type { DownstreamAddresses } from '../network/downstream_addresses';
import { Http2ClientConnection, type Http2ConnectionOwner } from './http2_client_connection';
import { PoolAdmission } from './pool_admission';
import type { ConnectionTarget } from './upstream_connection';

/** UpstreamConnectionLogs' logger for this file's lines, from `pool`: taken once per worker, never per pool. */
export function http2PoolLog(pool: Logger): Logger {
  return pool.forFile(__filename);
}

export class Http2ConnectionPool implements ConnectionPool, Http2ConnectionOwner {
  readonly protocol = 'http2';
  private readonly admission: PoolAdmission;
  private readonly connections = new Set<Http2ClientConnection>();
  /** Connections opening, and the streams they will take between them. */
  private connecting = 0;
  private connectingCapacity = 0;
  private draining = false;
  private readonly options: Http2ProtocolOptions;
  private readonly log: Logger;

  /** As the HTTP/1 pool: the pool's unit of max_connection_pools was taken by its maker. */
  constructor(
    private readonly target: ConnectionTarget,
    resources: ResourceManager,
  ) {
    this.admission = new PoolAdmission(target, resources);
    this.options = target.cluster.http2ProtocolOptions!;
    this.log = target.logs.http2Pool;
  }

  get hostStats(): HostStats {
    return this.target.hostStats;
  }

  newStream(decoder: ResponseDecoder, callbacks: PoolCallbacks, downstream: DownstreamAddresses): void {
    const ready = this.readyConnection();
    const log = this.log;
    if (ready !== null) {
      if (log.enabled('debug')) log.debug(`[C${ready.id}] using existing connection`);
      this.attach(ready, decoder, callbacks);
      return;
    }
    if (!this.admission.enqueue(decoder, callbacks)) return;
    // Envoy's order: the request queued (newPendingRequest), then a connection made for it.
    if (log.enabled('debug')) log.debug('queueing request due to no available connections');
    this.tryCreateConnection(downstream);
  }

  cancel(callbacks: PoolCallbacks): void {
    this.admission.cancel(callbacks);
  }

  get idleForever(): boolean {
    return this.connections.size === 0 && this.admission.waiting === 0;
  }

  /** Connections take no new streams and close (with GOAWAY) once their streams end. */
  drain(): void {
    this.draining = true;
    this.admission.retire();
    for (const connection of this.connections) connection.drain();
  }

  close(): void {
    this.draining = true;
    this.admission.retire();
    this.admission.failPending('local reset');
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
    this.admission.releaseConnection();
    // As Envoy does: a host that refuses connections fails everything waiting for it.
    this.admission.failPending('connection failure');
  }

  onStreamDone(connection: Http2ClientConnection): void {
    this.admission.streamDone();
    if (connection.draining) {
      if (connection.activeStreams === 0) connection.close();
      return;
    }
    this.serve(connection);
  }

  onGoAway(connection: Http2ClientConnection): void {
    if (connection.activeStreams === 0) connection.close();
    // Requests waiting for this connection need another.
    if (this.admission.waiting > 0 && !this.draining) this.tryCreateConnection(connection.downstream);
  }

  onConnectionClosed(connection: Http2ClientConnection): void {
    this.connections.delete(connection);
    this.admission.releaseConnection();
    if (this.admission.waiting > 0 && !this.draining) this.tryCreateConnection(connection.downstream);
  }

  // ---- internals -----------------------------------------------------------------------------

  /** A connected connection with room for a stream, or null. */
  private readyConnection(): Http2ClientConnection | null {
    for (const connection of this.connections) if (connection.capacity > 0) return connection;
    return null;
  }

  /** Waiting requests get streams on `connection` while it has room. */
  private serve(connection: Http2ClientConnection): void {
    while (connection.capacity > 0) {
      const next = this.admission.dequeue();
      if (next === undefined) break;
      this.attach(connection, next.decoder, next.callbacks);
    }
    if (this.admission.waiting > 0 && !this.draining) this.tryCreateConnection(connection.downstream);
  }

  /** Opens a connection when those opening cannot take every waiting request, as max_connections allows. */
  private tryCreateConnection(downstream: DownstreamAddresses): void {
    if (this.connectingCapacity >= this.admission.waiting) return;
    if (!this.admission.admitConnection(this.connections.size > 0)) return;
    this.connecting++;
    this.connectingCapacity += this.options.maxConcurrentStreams;
    const id = this.target.logs.ids.nextConnection();
    const log = this.log;
    if (log.enabled('debug')) log.debug(`[C${id}] creating a new connection`);
    this.connections.add(new Http2ClientConnection(this.target, this, this.options, downstream, id));
  }

  /** A stream on `connection` for the request, if max_requests allows; an overflow failure if not. */
  private attach(connection: Http2ClientConnection, decoder: ResponseDecoder, callbacks: PoolCallbacks): void {
    if (!this.admission.admitStream(callbacks)) return;
    const encoder = connection.newStream(decoder);
    const max = this.target.cluster.maxRequestsPerConnection;
    if (max > 0 && connection.streamCount >= max) {
      this.target.cluster.stats.counters.upstream_cx_max_requests.inc();
      connection.draining = true;
    }
    callbacks.onPoolReady(encoder, this.target.hostStats);
  }
}

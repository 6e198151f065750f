// The HTTP/1.1 connection pool of one upstream host at one routing priority (Envoy's http1
// ConnPoolImpl on ConnPoolImplBase): one request per connection at a time, idle connections kept
// alive and reused most-recent-first, a new connection opened for each request that finds none
// idle and none about to connect, within the cluster's circuit breakers: a request waits only if
// max_pending_requests allows, a connection opens only if max_connections does (else the request
// waits for one to free up), and a request is given a connection only if max_requests allows.

import type { ConnectionPool, PoolCallbacks, ResponseDecoder } from '../http/codec';
import type { Logger } from '../log/logger_api';
import type { HostStats } from '../stats/stats';
import type { ResourceManager } from '../upstream/shared/resource_manager';
import { type ConnectionOwner, Http1ClientConnection } from './http1_client_connection';
import type { DownstreamAddresses } from '../network/downstream_addresses';
import { PoolAdmission } from './pool_admission';
import type { ConnectFailureReason, ConnectionTarget } from './upstream_connection';

/** UpstreamConnectionLogs' logger for this file's lines, from `pool`: taken once per worker, never per pool. */
export function http1PoolLog(pool: Logger): Logger {
  return pool.forFile(__filename);
}

export class Http1ConnectionPool implements ConnectionPool, ConnectionOwner {
  readonly protocol = 'http1';
  private readonly idle: Http1ClientConnection[] = [];
  private readonly admission: PoolAdmission;
  private readonly connections = new Set<Http1ClientConnection>();
  private connecting = 0;
  private draining = false;
  private readonly log: Logger;

  /**
   * `resources`: the circuit breakers of the pool's priority. The pool's own unit of
   * max_connection_pools was taken by its maker; the pool gives it back when drained or closed.
   */
  constructor(
    private readonly target: ConnectionTarget,
    resources: ResourceManager,
  ) {
    this.admission = new PoolAdmission(target, resources);
    this.log = target.logs.http1Pool;
  }

  get hostStats(): HostStats {
    return this.target.hostStats;
  }

  /**
   * Gives `callbacks` a connection now, or once one is ready (or failed). A connection opened
   * for it serves `downstream` (see ClusterInfo.downstreamSpecificConnections).
   */
  newStream(decoder: ResponseDecoder, callbacks: PoolCallbacks, downstream: DownstreamAddresses): void {
    let connection = this.idle.pop();
    // One closing (idle timeout, max_connection_duration) leaves the list when its socket closes.
    while (connection !== undefined && connection.draining) connection = this.idle.pop();
    const log = this.log;
    if (connection !== undefined) {
      if (log.enabled('debug')) log.debug(`[C${connection.id}] using existing connection`);
      if (!this.attach(connection, decoder, callbacks)) this.idle.push(connection);
      return;
    }
    if (!this.admission.enqueue(decoder, callbacks)) return;
    // Envoy's order: the request queued (newPendingRequest), then a connection made for it.
    if (log.enabled('debug')) log.debug('queueing request due to no available connections');
    this.tryCreateConnection(downstream);
  }

  /** Withdraws a request still waiting for a connection. */
  cancel(callbacks: PoolCallbacks): void {
    this.admission.cancel(callbacks);
  }

  /** No connection, open or opening, and nobody waiting: the pool may be freed (max_connection_pools). */
  get idleForever(): boolean {
    return this.connections.size === 0 && this.admission.waiting === 0;
  }

  /** The host left the cluster: close idle connections now, busy ones when their request ends. */
  drain(): void {
    this.draining = true;
    this.admission.retire();
    for (const connection of this.idle.splice(0)) connection.close();
  }

  /** Fails waiting requests and closes every connection. */
  close(): void {
    this.draining = true;
    this.admission.retire();
    this.admission.failPending('local reset');
    for (const connection of this.connections) connection.close();
  }

  // ---- ConnectionOwner ------------------------------------------------------------------

  onConnectionConnected(connection: Http1ClientConnection): void {
    this.connecting--;
    this.release(connection);
  }

  onConnectionFailure(connection: Http1ClientConnection, reason: ConnectFailureReason): void {
    const log = this.log;
    if (log.enabled('debug')) log.debug(`[C${connection.id}] client disconnected, failure reason: ${reason}`);
    this.connecting--;
    this.connections.delete(connection);
    this.admission.releaseConnection();
    // As Envoy does: a host that refuses connections fails everything waiting for it.
    this.admission.failPending('connection failure');
  }

  onStreamDone(connection: Http1ClientConnection, reusable: boolean): void {
    const log = this.log;
    if (log.enabled('debug')) log.debug(`[C${connection.id}] response complete`);
    this.admission.streamDone();
    const max = this.target.cluster.maxRequestsPerConnection;
    if (reusable && !this.draining && !connection.draining && (max === 0 || connection.requestCount < max)) {
      this.release(connection);
    } else {
      connection.close();
    }
  }

  onConnectionClosed(connection: Http1ClientConnection): void {
    const log = this.log;
    if (log.enabled('debug')) log.debug(`[C${connection.id}] client disconnected, failure reason: `);
    this.connections.delete(connection);
    this.admission.releaseConnection();
    const index = this.idle.indexOf(connection);
    if (index >= 0) this.idle.splice(index, 1);
    // Requests waiting because max_connections was reached may now get a connection.
    if (this.admission.waiting > 0 && !this.draining) this.tryCreateConnection(connection.downstream);
  }

  // ---- internals -----------------------------------------------------------------------------

  /** Opens a connection for the waiting requests that none opening will serve, as max_connections allows. */
  private tryCreateConnection(downstream: DownstreamAddresses): void {
    if (this.connecting >= this.admission.waiting) return;
    if (!this.admission.admitConnection(this.connections.size > 0)) return;
    this.connecting++;
    const id = this.target.logs.ids.nextConnection();
    const log = this.log;
    if (log.enabled('debug')) log.debug(`[C${id}] creating a new connection`);
    this.connections.add(new Http1ClientConnection(this.target, this, downstream, id));
  }

  /** A connection is free: the oldest waiting request gets it, or it goes idle. */
  private release(connection: Http1ClientConnection): void {
    for (let next = this.admission.dequeue(); next !== undefined; next = this.admission.dequeue()) {
      const log = this.log;
      if (log.enabled('debug')) log.debug(`[C${connection.id}] attaching to next request`);
      // A request refused by max_requests leaves the connection free for the next one.
      if (this.attach(connection, next.decoder, next.callbacks)) return;
    }
    if (this.draining) {
      connection.close();
    } else {
      const log = this.log;
      if (log.enabled('debug')) log.debug(`[C${connection.id}] moving to ready`);
      this.idle.push(connection);
      connection.markIdle();
    }
  }

  /** Gives `connection` to `callbacks` if max_requests allows; false (and an overflow failure) if not. */
  private attach(connection: Http1ClientConnection, decoder: ResponseDecoder, callbacks: PoolCallbacks): boolean {
    if (!this.admission.admitStream(callbacks)) return false;
    connection.requestCount++;
    if (connection.requestCount === this.target.cluster.maxRequestsPerConnection) this.target.cluster.stats.counters.upstream_cx_max_requests.inc();
    callbacks.onPoolReady(connection.newStream(decoder), this.target.hostStats);
    return true;
  }
}

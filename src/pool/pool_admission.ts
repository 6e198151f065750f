// What every HTTP connection pool of a host does the same way, whatever its protocol (Envoy's
// ConnPoolImplBase): the queue of requests waiting for a connection, and admission through the
// circuit breakers of the pool's priority with its counters: max_pending_requests for the queue,
// max_connections for connections, max_requests for streams, and the pool's own unit of
// max_connection_pools, which its maker took and the pool gives back once.

import type { PoolCallbacks, ResponseDecoder, StreamResetReason } from '../http/codec';
import type { ResourceManager } from '../upstream/shared/resource_manager';
import type { ConnectionTarget } from './upstream_connection';

/** A request waiting for a connection. */
export interface PendingStream {
  readonly decoder: ResponseDecoder;
  readonly callbacks: PoolCallbacks;
}

export class PoolAdmission {
  /** Oldest first. */
  private readonly pending: PendingStream[] = [];
  private retired = false;

  constructor(
    private readonly target: ConnectionTarget,
    private readonly resources: ResourceManager,
  ) {}

  /** How many requests wait for a connection. */
  get waiting(): number {
    return this.pending.length;
  }

  /** Queues the request if max_pending_requests allows; otherwise fails it with an overflow. */
  enqueue(decoder: ResponseDecoder, callbacks: PoolCallbacks): boolean {
    const stats = this.target.cluster.stats;
    if (!this.resources.pendingRequests.tryAcquire()) {
      stats.counters.upstream_rq_pending_overflow.inc();
      callbacks.onPoolFailure('overflow');
      return false;
    }
    stats.counters.upstream_rq_pending_total.inc();
    stats.gauges.upstream_rq_pending_active.inc();
    this.pending.push({ decoder, callbacks });
    return true;
  }

  /** The oldest waiting request, off the queue; undefined when none waits. */
  dequeue(): PendingStream | undefined {
    const next = this.pending.shift();
    if (next !== undefined) this.leavePending();
    return next;
  }

  /** Withdraws a request still waiting. */
  cancel(callbacks: PoolCallbacks): void {
    const index = this.pending.findIndex((p) => p.callbacks === callbacks);
    if (index < 0) return;
    this.pending.splice(index, 1);
    this.leavePending();
  }

  /** Fails every waiting request (counted as pending_failure_eject). */
  failPending(reason: StreamResetReason): void {
    const failed = this.pending.splice(0);
    const stats = this.target.cluster.stats;
    for (const { callbacks } of failed) {
      this.leavePending();
      stats.counters.upstream_rq_pending_failure_eject.inc();
      callbacks.onPoolFailure(reason);
    }
  }

  /**
   * Whether a new connection may open under max_connections. Over it, requests wait for one to
   * free up, unless the pool has none at all: as Envoy does, it then opens one anyway, or requests
   * queued here while other pools hold every connection would never be served.
   */
  admitConnection(poolHasConnections: boolean): boolean {
    const connections = this.resources.connections;
    if (connections.tryAcquire()) return true;
    this.target.cluster.stats.counters.upstream_cx_overflow.inc();
    if (poolHasConnections) return false;
    connections.inc();
    return true;
  }

  /** A connection admitted by admitConnection closed (or never opened). */
  releaseConnection(): void {
    this.resources.connections.release();
  }

  /**
   * Takes a unit of max_requests for a stream and counts it; when refused, fails the request with
   * an overflow and returns false.
   */
  admitStream(callbacks: PoolCallbacks): boolean {
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
    return true;
  }

  /** A stream admitted by admitStream ended. */
  streamDone(): void {
    this.target.cluster.stats.gauges.upstream_rq_active.dec();
    this.target.hostStats.rq_active.dec();
    this.resources.requests.release();
  }

  /** Gives back the pool's unit of max_connection_pools, once. */
  retire(): void {
    if (this.retired) return;
    this.retired = true;
    this.resources.connectionPools.release();
  }

  private leavePending(): void {
    this.target.cluster.stats.gauges.upstream_rq_pending_active.dec();
    this.resources.pendingRequests.release();
  }
}
